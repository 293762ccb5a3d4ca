"""An nn.Module problem (KernelBench format): compiled by torch.compile, its Inductor output modules
captured (session.py) and the ops run on them (ops.py)."""
