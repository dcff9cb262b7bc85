"""The y = x**2; z = y*4; z.mean() then z.sum() walkthrough: why retain_graph is needed.

The documents' code with only the import changed.
"""

import chainrule as torch

x = torch.ones(2, requires_grad=True)
y = x**2
z = y * 4
z.mean().backward()
try:
    z.sum().backward()
except RuntimeError as e:
    print("without retain_graph:", type(e).__name__ + ":", str(e)[:75] + "...")

x = torch.ones(2, requires_grad=True)
y = x**2
z = y * 4
z.mean().backward(retain_graph=True)
print("x.grad after z.mean().backward(retain_graph=True):", x.grad)
z.sum().backward()
print("x.grad after z.sum().backward() (the gradients add up):", x.grad)
