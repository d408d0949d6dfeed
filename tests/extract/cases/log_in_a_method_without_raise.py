# The walk skips method bodies that cannot give a site (no raise, assert, class or log word);
# a log call is such a site, so this method is walked: its site has the method's qualname and
# the if's test as its guard.
import logging
logger = logging.getLogger(__name__)

class Worker:
    def transfer(self, req):
        if req.failed:
            logger.error("NIXL transfer failed for request %s", req.id)
