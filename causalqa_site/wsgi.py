import gc
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "causalqa_site.settings")
application = get_wsgi_application()

# Everything loaded so far (Django, the apps, their modules) lives as long as the worker. Frozen, the
# garbage collector no longer walks it on each full collection, which otherwise costs milliseconds in
# whichever request happens to trigger one.
gc.freeze()
