# Log calls at warning and above are sites of kind "log", with their level, logger and
# whether they log once: %-formatting ("percent"), f-strings, the logging module's own loggers,
# logger.exception (ERROR). Info, debug, info_once, a message with no literal text and a
# non-logger are left out; "100%" with no arguments is the message as logging prints it.
import logging
from vllm.logger import init_logger

logger = init_logger(__name__)
_LOG = logging.getLogger(__name__)


def serve(port, n, limit):
    logger.warning("Address already in use. Retrying with a new port.")
    logger.warning("Input prompt (%d tokens) is too long and exceeds limit of %d", n, limit)
    logger.warning_once(f"Port {port} is busy")
    _LOG.error("transfer %(req)s failed", {"req": n})
    logging.getLogger("x").critical("disk full at %s", port)
    logger.exception("Engine loop crashed")
    logger.info("Started server process on %d", port)
    logger.debug("debug %s", port)
    logger.info_once("once")
    logger.exception(port)
    logger.error("%s", port)
    print.warning("not a logger")
    logger.warning("100%")
