"""Vision-transformer front end: 16x16 patch-embedding conv, class token, learned position embedding,
one pre-norm attention + MLP block (SDPA), final LayerNorm."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, image_size: int, patch: int, channels: int, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        n_patches = (image_size // patch) ** 2
        self.patch_embed = nn.Conv2d(channels, dim, kernel_size=patch, stride=patch)
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.pos_embed = nn.Parameter(torch.randn(1, n_patches + 1, dim) * 0.02)
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)
        self.norm_out = nn.LayerNorm(dim)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        x = self.patch_embed(images).flatten(2).transpose(1, 2)
        b, _, d = x.shape
        x = torch.cat([self.cls_token.expand(b, -1, -1), x], dim=1) + self.pos_embed
        t = x.shape[1]
        q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4).unbind(0)
        a = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(a)
        x = x + self.fc2(F.gelu(self.fc1(self.norm2(x))))
        return self.norm_out(x)


BATCH = 32
CHANNELS = 3
IMAGE_SIZE = 224
PATCH = 16
DIM = 768
HEADS = 12


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, IMAGE_SIZE, IMAGE_SIZE)]


def get_init_inputs():
    return [IMAGE_SIZE, PATCH, CHANNELS, DIM, HEADS]
