"""The X = [4, 3, 2] walkthrough: Y assembled by index assignment, backward with a gradient.

The documents' code with only the import changed
(``import torch`` -> ``import chainrule as torch``).
"""

import chainrule as torch

X = torch.tensor([4.0, 3.0, 2.0], requires_grad=True)
x0, x1, x2 = X[0], X[1], X[2]
y0 = 3 * x0 + 7 * x1**2 + 6 * x2**3
y1 = 4 * x0 + 8 * x1**2 + 3 * x2**3
y2 = 5 * x0 + 9 * x1**2 + 1 * x2**3
Y = torch.zeros(3)
Y[0], Y[1], Y[2] = y0, y1, y2
print("Y =", Y)

Y.backward(gradient=torch.tensor([10.0, 100.0, 1000.0]), retain_graph=True)
print("X.grad after 1 backward:", X.grad)
Y.backward(gradient=torch.tensor([10.0, 100.0, 1000.0]), retain_graph=True)
print("X.grad after 2 backwards:", X.grad)
Y.backward(gradient=torch.tensor([10.0, 100.0, 1000.0]))
print("X.grad after 3 backwards:", X.grad)
X.grad.zero_()
print("X.grad after zero_():", X.grad)

try:
    Y.backward(gradient=torch.tensor([10.0, 100.0, 1000.0]))
except RuntimeError as e:
    print("4th backward (graph freed by the 3rd):", type(e).__name__ + ":", str(e)[:75] + "...")
