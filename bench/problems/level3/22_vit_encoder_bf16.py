"""A bf16 ViT-B-width encoder, 4 blocks deep: 16x16 patch-embedding conv, class token, learned position
embedding, pre-norm blocks (LayerNorm, fused QKV, scaled_dot_product_attention over 197 tokens, projection,
LayerNorm, GELU MLP, residuals), final LayerNorm and a 1000-class head on the class token."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4).unbind(0)
        x = x + self.proj(F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, t, d))
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


class Model(nn.Module):
    def __init__(self, image_size: int, patch: int, channels: int, dim: int, heads: int, depth: int, classes: int):
        super().__init__()
        n_patches = (image_size // patch) ** 2
        self.patch_embed = nn.Conv2d(channels, dim, kernel_size=patch, stride=patch)
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.pos_embed = nn.Parameter(torch.randn(1, n_patches + 1, dim) * 0.02)
        self.blocks = nn.Sequential(*[Block(dim, heads) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)
        self.to(torch.bfloat16)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        x = self.patch_embed(images).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1) + self.pos_embed
        x = self.norm(self.blocks(x))
        return self.head(x[:, 0])


BATCH = 128
CHANNELS = 3
IMAGE_SIZE = 224
PATCH = 16
DIM = 768
HEADS = 12
DEPTH = 4
CLASSES = 1000


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, IMAGE_SIZE, IMAGE_SIZE, dtype=torch.bfloat16)]


def get_init_inputs():
    return [IMAGE_SIZE, PATCH, CHANNELS, DIM, HEADS, DEPTH, CLASSES]
