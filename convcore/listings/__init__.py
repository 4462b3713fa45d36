"""Listings: the plain loops a student writes, as real Python files, one per pass and
trace setting, and the registry that pairs them with the trace (docs/listings.md).

```python
from convcore.listings import get_listing
listing = get_listing("cs231n", "direct", "window", "fused")
listing.lines                           # the code, one string a line
listing.functions["backward"]           # conv_backward_naive, ready to call
listing.line_map                        # {"backward": {"db": 37, "dw": 38, "dxp": 39}, ...}
listing.event_lines(event, aliases)     # the lines a trace event runs
```

The files live in ``convcore/listings/<convention>/`` and import NumPy only; a line
that ends in ``# step: <phase>`` is where a trace step of that phase writes
(``marks``). ``registry`` reads the setting of each file from its loops.
"""

from .marks import ListingMarkError, Mark, read_marks
from .registry import CALLS, FILES, Listing, ListingNotFound, get_listing, listing_for, listings

__all__ = [
    "CALLS",
    "FILES",
    "Listing",
    "ListingMarkError",
    "ListingNotFound",
    "Mark",
    "get_listing",
    "listing_for",
    "listings",
    "read_marks",
]
