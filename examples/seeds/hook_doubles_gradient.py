"""The ``register_hook`` docstring example from the PyTorch 0.x documents: a hook doubles the
gradient, then is removed. The documents' code with only the imports changed."""

import chainrule as torch
from chainrule.autograd import Variable

v = Variable(torch.Tensor([0, 0, 0]), requires_grad=True)
h = v.register_hook(lambda grad: grad * 2)  # double the gradient
v.backward(torch.Tensor([1, 1, 1]))
print("v.grad with the hook:", v.grad.data)
h.remove()  # removes the hook

v.grad.data.zero_()
v.backward(torch.Tensor([1, 1, 1]))
print("v.grad after h.remove():", v.grad.data)
