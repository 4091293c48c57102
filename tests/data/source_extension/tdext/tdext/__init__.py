"""tdext: adds one to a CUDA float32 tensor, in place (torchdock's test extension)."""
import torch  # noqa: F401  (loads libtorch before the extension)

from tdext._C import add_one  # noqa: F401
