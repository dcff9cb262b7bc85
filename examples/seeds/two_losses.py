"""Two losses that share one graph: ``loss1.backward(retain_graph=True); loss2.backward();
optimizer.step()``. The accumulated gradients equal those of ``loss1 + loss2``.

The documents' pattern with only the import changed.
"""

import chainrule as torch
import chainrule.nn as nn
import chainrule.optim as optim

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
optimizer = optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(16, 4)
target = torch.randn(16, 2)

out = model(x)  # one forward, used by both losses
loss1 = nn.functional.mse_loss(out, target)
loss2 = out.abs().mean()

optimizer.zero_grad()
loss1.backward(retain_graph=True)  # keep the saved buffers: loss2 goes through them again
loss2.backward()
accumulated = [p.grad.clone() for p in model.parameters()]

optimizer.zero_grad()
(nn.functional.mse_loss(model(x), target) + model(x).abs().mean()).backward()
summed = [p.grad.clone() for p in model.parameters()]

for (name, _), a, s in zip(model.named_parameters(), accumulated, summed):
    print(
        f"{name:<8} grad norm {a.norm().item():.6f}  equals grad of (loss1 + loss2): "
        f"{torch.allclose(a, s, atol=1e-6)}"
    )

optimizer.zero_grad()
loss1 = nn.functional.mse_loss(model(x), target)
print("loss1 before step:", round(loss1.item(), 6))
for p, a in zip(model.parameters(), accumulated):
    p.grad = a
optimizer.step()
print("loss1 after step: ", round(nn.functional.mse_loss(model(x), target).item(), 6))
