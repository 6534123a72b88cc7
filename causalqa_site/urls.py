from django.conf import settings
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.http import HttpResponsePermanentRedirect
from django.templatetags.static import static
from django.urls import include, path
from django.views.i18n import JavaScriptCatalog


def favicon(request):
    """Browsers ask for /favicon.ico where a page names no icon (the API's JSON, files served raw)."""
    return HttpResponsePermanentRedirect(static("favicon.svg"))


urlpatterns = [
    path("admin/", admin.site.urls),
    path("favicon.ico", favicon, name="favicon"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/password/", auth_views.PasswordChangeView.as_view(), name="password_change"),
    path("accounts/password/done/", auth_views.PasswordChangeDoneView.as_view(), name="password_change_done"),
    path("i18n/", include("django.conf.urls.i18n")),
    path("jsi18n/", JavaScriptCatalog.as_view(), name="javascript-catalog"),
    path("generation/", include("generation.urls")),
    path("generation/", include("topics.urls")),
    path("evaluation/", include("evaluation.urls")),
    path("api/", include("causalqa_site.api_urls")),
    path("", include("designs.urls")),  # pages of individual designs (CausalBench's check, ExpliCa's pairs)
    path("", include("annotation.urls")),
]

if settings.DEBUG:
    from django.conf.urls.static import static as static_files

    urlpatterns += static_files(settings.MEDIA_URL, document_root=settings.MEDIA_ROOT)

handler400 = "core.error_views.bad_request"
handler403 = "core.error_views.permission_denied"
handler404 = "core.error_views.not_found"
handler500 = "core.error_views.server_error"
