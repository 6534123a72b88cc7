# Um só formato de data por idioma: nas páginas em português, "24/11/2026 14:05 -03": a hora
# sempre diz o seu fuso (o do site, TIME_ZONE), pois anotadores e curadores trabalham de vários.
DATE_FORMAT = "d/m/Y"
SHORT_DATE_FORMAT = "d/m/Y"
DATETIME_FORMAT = "d/m/Y H:i T"
SHORT_DATETIME_FORMAT = "d/m/Y H:i T"
TIME_FORMAT = "H:i"
