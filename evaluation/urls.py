from django.urls import path

from . import views

app_name = "evaluation"

urlpatterns = [
    path("p/<slug:slug>/agreement/", views.agreement, name="agreement"),
    path("p/<slug:slug>/releases/", views.release_list, name="release_list"),
    path("p/<slug:slug>/releases/<int:version>/", views.release_detail, name="release_detail"),
    path("p/<slug:slug>/releases/<int:version>/download.zip", views.release_download, name="release_download"),
    path("p/<slug:slug>/api-tokens/", views.api_tokens, name="api_tokens"),
    path("p/<slug:slug>/api-tokens/<int:user_id>/issue/", views.api_token_issue, name="api_token_issue"),
    path("p/<slug:slug>/api-tokens/<int:user_id>/revoke/", views.api_token_revoke, name="api_token_revoke"),
    path("my-api-token/", views.my_api_token, name="my_api_token"),
]
