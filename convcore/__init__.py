"""convcore: the numerical core of ConvScope, pure NumPy, knows nothing of the web.

NCHW input, OIHW weights, PyTorch's argument names and meaning, float64. Besides
Conv2d: ConvTranspose2d (``conv_transpose2d_*``, weight ``(C_in, C_out/groups, KH, KW)``)
and Conv1d (``conv1d_*``, NCL), and PyTorch's padding modes (``padding_mode``).
"""

from .conv1d import conv1d_backward, conv1d_forward
from .conv_transpose import conv_transpose2d_backward, conv_transpose2d_forward
from .functional import conv2d_backward, conv2d_forward
from .padding_modes import PADDING_MODES
from .spec import ConvSpec, ConvSpecError
from .transpose_spec import TransposeSpec

__all__ = [
    "PADDING_MODES",
    "ConvSpec",
    "ConvSpecError",
    "TransposeSpec",
    "conv1d_backward",
    "conv1d_forward",
    "conv2d_backward",
    "conv2d_forward",
    "conv_transpose2d_backward",
    "conv_transpose2d_forward",
    "__version__",
]
__version__ = "0.1.0"
