"""The SRGAN update loop from the documents, and the ordering PyTorch 2.x accepts.

As written, the generator criterion reuses ``fake_out``, computed by the discriminator *before*
``optimizerD.step()`` changed its weights in place; backward through it then needs the old
weights, so PyTorch 2.x (and chainrule) refuse it. The corrected loop runs the discriminator
again after its step. The documents' code with only the imports changed (plus ``.item()`` where
it read ``.data[0]``, which PyTorch 2.x also rejects).
"""

import pathlib
import sys

import chainrule as torch
import chainrule.nn as nn
import chainrule.optim as optim
from chainrule.autograd import Variable

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "srgan"))
from models import Discriminator, GeneratorLoss  # noqa: E402

torch.manual_seed(0)
netG = nn.Sequential(
    nn.Conv2d(3, 8, 3, padding=1), nn.PReLU(), nn.Conv2d(8, 12, 3, padding=1), nn.PixelShuffle(2)
)
netD = Discriminator(8)
generator_criterion = GeneratorLoss()
optimizerG = optim.Adam(netG.parameters())
optimizerD = optim.Adam(netD.parameters())
train_bar = [(torch.rand(2, 3, 8, 8), torch.rand(2, 3, 16, 16)) for _ in range(3)]


def as_written():
    for data, target in train_bar:
        real_img = Variable(target)
        if torch.cuda.is_available():
            real_img = real_img.cuda()
        z = Variable(data)
        if torch.cuda.is_available():
            z = z.cuda()
        fake_img = netG(z)

        netD.zero_grad()
        real_out = netD(real_img).mean()
        fake_out = netD(fake_img).mean()
        d_loss = 1 - real_out + fake_out
        d_loss.backward(retain_graph=True)
        optimizerD.step()

        netG.zero_grad()
        g_loss = generator_criterion(fake_out, fake_img, real_img)
        g_loss.backward()
        optimizerG.step()


def corrected():
    losses = []
    for data, target in train_bar:
        real_img = Variable(target)
        z = Variable(data)
        fake_img = netG(z)

        netD.zero_grad()
        real_out = netD(real_img).mean()
        fake_out = netD(fake_img).mean()
        d_loss = 1 - real_out + fake_out
        d_loss.backward(retain_graph=True)
        optimizerD.step()

        netG.zero_grad()
        fake_out = netD(fake_img).mean()  # the discriminator again, after its step
        g_loss = generator_criterion(fake_out, fake_img, real_img)
        g_loss.backward()
        optimizerG.step()
        losses.append((d_loss.item(), g_loss.item()))
    return losses


try:
    as_written()
    print("as written: trained (unexpected)")
except RuntimeError as e:
    print("as written: RuntimeError:", e)

for i, (d, g) in enumerate(corrected()):
    print(f"corrected, step {i}: d_loss {d:.4f}  g_loss {g:.4f}")
