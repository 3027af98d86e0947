"""Each ``--transport`` name and its class. The registry lives apart from
:mod:`turneval.probe.transports` because one transport (:mod:`turneval.probe.webrtc`) is built on
that module's base classes: listing it there would make the two modules import each other."""
from __future__ import annotations

from typing import Any

from turneval.probe.transports import (
    TELEPHONY_TRANSPORTS,
    AgentTransport,
    PipecatTransport,
    ProbeError,
    RawPCMTransport,
)


def _webrtc() -> type[AgentTransport]:
    from turneval.probe.webrtc import SmallWebRTCTransport

    return SmallWebRTCTransport


TRANSPORTS: dict[str, type[AgentTransport]] = {"raw": RawPCMTransport, "pipecat": PipecatTransport, **TELEPHONY_TRANSPORTS}
"""Transport name (``--transport``) -> class (webrtc is added by :func:`transport_class`, its module on demand)."""
TRANSPORT_NAMES = (*TRANSPORTS, "webrtc")


def transport_class(name: str) -> type[AgentTransport]:
    """The class behind a ``--transport`` name."""
    if name == "webrtc":
        return _webrtc()
    try:
        return TRANSPORTS[name]
    except KeyError:
        raise ProbeError(f"unknown transport {name!r}; choose one of {', '.join(TRANSPORT_NAMES)}") from None


def make_transport(name: str, url: str, **options: Any) -> AgentTransport:
    """A transport by name; ``options`` go to its constructor."""
    return transport_class(name)(url, **options)
