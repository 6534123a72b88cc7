# One date format per language: every date and time on English pages reads "24 Nov 2026, 14:05 -03": a time
# always says its zone (the site's, TIME_ZONE), since annotators and curators work from several.
DATE_FORMAT = "j M Y"
SHORT_DATE_FORMAT = "j M Y"
DATETIME_FORMAT = "j M Y, H:i T"
SHORT_DATETIME_FORMAT = "j M Y, H:i T"
TIME_FORMAT = "H:i"
