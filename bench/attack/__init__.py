"""The rows of bench/attack.py (the entry point, which lists them in order and runs them) and the harness they share.

  harness.py          the bounds, the server under attack (`Server`) and its `Meter`, a row (`Row`) and what it
                      started (`Scene`), the run's context (`Ctx`), the tables
  ogg.py              the pages and links of a capture, the Ogg Opus fixtures
  listener.py         the honest listener (`Honest`)
  flood.py            attacker connections (`Flood`, `ProcessFlood`), /health polling
  upstream.py         attacker upstreams (`Upstream`)
  rows_status.py      forged-proxy, status-idle, status-slowloris, dns-blackhole, status-idle-same
  rows_http.py        http-pending, http-head-lines, http-idle-same, framing
  rows_edge.py        oggs-flood, link-flood, title-flood, big-packets, multichannel
  rows_events_log.py  events-idle, access-fifo
"""
