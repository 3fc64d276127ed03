"""The processes' logging: the main log, and the access log's switch.

Its own module because both the command (``main``) and an API worker
(``serve.load_app``) set it up.
"""
from __future__ import annotations

import logging
import warnings

from oslo_config import cfg

# Warnings libraries we depend on print at import, about their own
# dependencies, that no setting of ours changes: eventlet's deprecation
# banner (python-ovs and oslo.service import eventlet whether it is used or
# not; neutrino runs no green threads) and cryptography's DSA deprecation,
# raised by dnspython's DNSSEC module that eventlet imports.
FOREIGN_BANNERS = (
    (r"\s*Eventlet is deprecated", r""),
    (r"DSA is deprecated", r"dns\."),
)


def quiet_foreign_banners() -> None:
    """Filter exactly those warnings; every other one still shows."""
    for message, module in FOREIGN_BANNERS:
        warnings.filterwarnings("ignore", message=message, module=module)


def setup_logging(conf: cfg.ConfigOpts) -> None:
    level = logging.DEBUG if conf.debug else logging.INFO
    handler: logging.Handler = (logging.FileHandler(conf.log_file) if conf.log_file
                                else logging.StreamHandler())
    handler.setFormatter(logging.Formatter(
        "%(asctime)s %(process)d %(levelname)s %(name)s %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    access = logging.getLogger("neutrino.access")
    switch_access_log(conf)
    if conf.access_log and conf.access_log != "-":
        access.propagate = False
        access.addHandler(logging.FileHandler(conf.access_log))
    for noisy in ("stevedore", "keystonemiddleware", "oslo_policy", "alembic.runtime.plugins"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def switch_access_log(conf: cfg.ConfigOpts) -> None:
    """An empty ``access_log`` turns the access log off. An API worker
    calls this again once granian has configured its logging: granian's
    dictConfig keeps existing loggers but enables every one of them."""
    logging.getLogger("neutrino.access").disabled = not conf.access_log
