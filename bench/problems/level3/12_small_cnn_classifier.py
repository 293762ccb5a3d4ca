"""Small image classifier: stem conv, three stride-2 conv-BN-ReLU stages, global average pool, linear head."""
import torch
import torch.nn as nn


def _stage(cin, cout, stride):
    bn = nn.BatchNorm2d(cout)
    with torch.no_grad():
        bn.running_mean.normal_(0.0, 0.1)
        bn.running_var.uniform_(0.5, 1.5)
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False), bn, nn.ReLU())


class Model(nn.Module):
    def __init__(self, in_channels: int, widths: list, classes: int):
        super().__init__()
        stages = [_stage(in_channels, widths[0], 1)]
        for cin, cout in zip(widths[:-1], widths[1:]):
            stages.append(_stage(cin, cout, 2))
        self.features = nn.Sequential(*stages)
        self.head = nn.Linear(widths[-1], classes)
        self.eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x).mean(dim=(2, 3)))


BATCH = 160
IN_CHANNELS = 3
IMAGE_SIZE = 160
WIDTHS = [32, 64, 128, 256]
CLASSES = 1000


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, IMAGE_SIZE, IMAGE_SIZE)]


def get_init_inputs():
    return [IN_CHANNELS, WIDTHS, CLASSES]
