"""convcore: the numerical core of ConvScope, pure NumPy, knows nothing of the web.

NCHW input, OIHW weights, PyTorch's argument names and meaning, float64. PyTorch's
padding modes (``padding_mode``) as in ``torch.nn.Conv2d``.
"""

from .functional import conv2d_backward, conv2d_forward
from .padding_modes import PADDING_MODES
from .spec import ConvSpec, ConvSpecError

__all__ = [
    "PADDING_MODES",
    "ConvSpec",
    "ConvSpecError",
    "conv2d_backward",
    "conv2d_forward",
    "__version__",
]
__version__ = "0.1.0"
