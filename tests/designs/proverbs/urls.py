from django.urls import path

from . import views

urlpatterns = [path("p/<slug:slug>/proverbs/", views.proverbs_page, name="proverbs")]
