"""`turneval probe`: drive a live voice agent with scripted callers and record both sides.

Modules: :mod:`~turneval.probe.transports` (how to talk to an agent: raw PCM or Pipecat over
WebSocket, a telephone provider's media stream), :mod:`~turneval.probe.telephony` (the providers'
messages and G.711, both ends), :mod:`~turneval.probe.webrtc` (a Pipecat SmallWebRTC call),
:mod:`~turneval.probe.pipecat_frames` (Pipecat's protobuf frames),
:mod:`~turneval.probe.scenarios` (what the caller says), :mod:`~turneval.probe.caller` (a caller
whose parts wait for the agent), :mod:`~turneval.probe.listener` (when the agent starts and stops,
heard live), :mod:`~turneval.probe.recorder` (both sides on one clock, sample folders),
:mod:`~turneval.probe.call` (one call's real-time loop), :mod:`~turneval.probe.runner` (calls in
turn, repeated, or many callers at once), :mod:`~turneval.probe.verdicts` (pass or fail per call),
:mod:`~turneval.probe.load` (latency against concurrency),
:mod:`~turneval.probe.summary` (the probe's figures, then ``turneval full-duplex-bench`` and ``turneval report``),
:mod:`~turneval.probe.mock_agents` (loopback agents for tests and docs). Nothing heavy is
imported here; websockets (aiortc for WebRTC) is loaded when a connection opens.
"""
