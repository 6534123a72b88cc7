"""A few hundred Portuguese causal questions across six themes, as people ask them (some with the HTML entities a
web export leaves behind), for the topic tests and ``benchmarks/topics.py``.

Each theme has causes and effects of its own, asked in many ways (why, what if, would, is it true that...);
``questions()`` gives (question, theme) pairs in a fixed shuffled order.
"""

import random
import re

THEMES = {
    "saúde": {
        "causes": [
            "o consumo de açúcar",
            "o cigarro",
            "a falta de sono",
            "o sedentarismo",
            "o excesso de sal",
            "o estresse no trabalho",
            "a bebida alcoólica",
            "a alimentação com ultraprocessados",
        ],
        "effects": [
            "a pressão alta",
            "o diabetes",
            "o ganho de peso",
            "as doenças do coração",
            "a ansiedade",
            "a perda de memória",
        ],
        "natural": [
            "Por que o médico mandou eu cortar o sal se minha pressão está boa?",
            "Tomar remédio para dormir todo dia faz mal para o fígado?",
            "Se eu caminhar meia hora por dia, minha glicemia vai baixar?",
            "Por que quem fuma tem mais infecções no pulmão?",
            "Ficar muito tempo sentado pode causar dor nas costas?",
        ],
    },
    "educação": {
        "causes": [
            "o uso de celular na sala de aula",
            "a falta de professores",
            "o ensino integral",
            "a leitura em casa",
            "a merenda escolar",
            "o ensino a distância",
            "a reprovação escolar",
            "o reforço escolar",
        ],
        "effects": [
            "o desempenho dos alunos",
            "a evasão escolar",
            "as notas no Enem",
            "a alfabetização das crianças",
            "a frequência às aulas",
            "o interesse pelos estudos",
        ],
        "natural": [
            "Por que tantos alunos largam a faculdade no primeiro ano?",
            "Se meu filho estudasse em escola integral, as notas dele melhorariam?",
            "Fazer cursinho aumenta mesmo a chance de passar no vestibular?",
            "Por que as crianças que leem mais escrevem melhor?",
            "A greve dos professores atrasa o aprendizado dos alunos?",
        ],
    },
    "economia": {
        "causes": [
            "a alta dos juros",
            "a inflação",
            "o aumento do salário mínimo",
            "a alta do dólar",
            "o desemprego",
            "o corte de impostos",
            "a crise econômica",
            "o aumento do preço da gasolina",
        ],
        "effects": [
            "o consumo das famílias",
            "o preço dos alimentos",
            "o endividamento das pessoas",
            "os investimentos das empresas",
            "a geração de empregos",
            "o poder de compra",
        ],
        "natural": [
            "Por que tudo fica mais caro quando o dólar sobe?",
            "Se o Banco Central baixasse os juros, o desemprego cairia?",
            "O aumento do salário mínimo causa inflação?",
            "Por que as pessoas se endividam mais no fim do ano?",
            "A reforma tributária vai baixar o preço das coisas no mercado?",
        ],
    },
    "meio ambiente": {
        "causes": [
            "o desmatamento da Amazônia",
            "as queimadas",
            "o aquecimento global",
            "a poluição dos rios",
            "o uso de agrotóxicos",
            "o lixo plástico",
            "a emissão de gases de efeito estufa",
            "a mineração ilegal",
        ],
        "effects": [
            "as chuvas no Sudeste",
            "a extinção de espécies",
            "a temperatura média do planeta",
            "a qualidade da água",
            "as secas no Nordeste",
            "a morte das abelhas",
        ],
        "natural": [
            "Por que está chovendo menos no interior de São Paulo?",
            "Se pararmos de desmatar, o clima volta ao normal?",
            "O plástico no oceano mata as tartarugas?",
            "Por que os rios da Amazônia estão secando?",
            "As queimadas no Pantanal afetam o ar das cidades?",
        ],
    },
    "animais": {
        "causes": [
            "a ração seca",
            "a castração",
            "a falta de passeios",
            "a vacinação dos filhotes",
            "a mudança de casa",
            "o excesso de petiscos",
            "a solidão durante o dia",
            "o banho frequente",
        ],
        "effects": [
            "o comportamento do cachorro",
            "a saúde do gato",
            "a obesidade dos animais",
            "a ansiedade do cachorro",
            "a queda de pelo",
            "a expectativa de vida dos pets",
        ],
        "natural": [
            "Por que meu gato vomita depois de comer?",
            "Se eu castrar meu cachorro, ele fica mais calmo?",
            "Por que o cachorro late tanto quando fica sozinho?",
            "Dar leite para gato faz mal?",
            "Meu cachorro come grama porque está com dor de barriga?",
        ],
    },
    "trânsito": {
        "causes": [
            "a chuva forte",
            "as obras na avenida",
            "o aumento da frota de carros",
            "o rodízio de placas",
            "a falta de ônibus",
            "as ciclovias",
            "o excesso de velocidade",
            "o preço da tarifa do metrô",
        ],
        "effects": [
            "os congestionamentos",
            "o número de acidentes",
            "o tempo de viagem até o trabalho",
            "a poluição do ar na cidade",
            "o uso do transporte público",
            "as mortes no trânsito",
        ],
        "natural": [
            "Por que o trânsito de São Paulo piora tanto na sexta-feira?",
            "Se a prefeitura baixasse a tarifa, mais gente andaria de ônibus?",
            "Os radares diminuem mesmo os acidentes nas estradas?",
            "Por que sempre alaga o túnel quando chove?",
            "Aplicativo de transporte aumentou o número de carros nas ruas?",
        ],
    },
}

# [singular|plural] agrees with the cause, <singular|plural> with the effect.
FRAMES = [
    "Por que {c} [leva|levam] a {e}?",
    "{C} [pode|podem] afetar {e}?",
    "Se {c} [diminuísse|diminuíssem], o que aconteceria com {e}?",
    "Qual é a relação entre {c} e {e}?",
    "É verdade que {c} [piora|pioram] {e}?",
    "Como {c} [influencia|influenciam] {e}?",
    "{C} [tem|têm] a ver com {e}?",
    "O que aconteceria com {e} se não [houvesse|houvesse] {c}?",
    "Será que {c} [explica|explicam] {e}?",
    "De que forma {c} [mexe|mexem] com {e}?",
    "Por que dizem que {c} [prejudica|prejudicam] {e}?",
    "Se o governo combatesse {c}, {e} <mudaria|mudariam>?",
]


def _agree(frame: str, cause: str, effect: str) -> str:
    cause_plural, effect_plural = cause.startswith(("os ", "as ")), effect.startswith(("os ", "as "))
    frame = re.sub(r"\[(\w+)\|(\w+)\]", lambda m: m.group(2 if cause_plural else 1), frame)
    return re.sub(r"<(\w+)\|(\w+)>", lambda m: m.group(2 if effect_plural else 1), frame)


CONTRACTIONS = [
    (r"\ba o\b", "ao"),
    (r"\ba os\b", "aos"),
    (r"\ba a\b", "à"),
    (r"\ba as\b", "às"),
    (r"\bde o\b", "do"),
    (r"\bde os\b", "dos"),
    (r"\bde a\b", "da"),
    (r"\bde as\b", "das"),
    (r"\bcom o\b", "com o"),
]


def _contract(text: str) -> str:
    for pattern, replacement in CONTRACTIONS:
        text = re.sub(pattern, replacement, text)
    return text


def questions(seed: int = 11) -> list[tuple[str, str]]:
    """(question, theme), about 50 a theme, shuffled; a few carry HTML entities as web exports leave them."""
    rng = random.Random(seed)
    rows = []
    for theme, parts in THEMES.items():
        for cause in parts["causes"]:
            for effect in rng.sample(parts["effects"], 5):
                frame = rng.choice(FRAMES)
                text = _contract(
                    _agree(frame, cause, effect).format(c=cause, C=cause[0].upper() + cause[1:], e=effect)
                )
                rows.append((text, theme))
        rows += [(text, theme) for text in parts["natural"]]
    rng.shuffle(rows)
    for index in range(0, len(rows), 23):  # a web export's leftovers: &amp; and &quot;
        question, theme = rows[index]
        rows[index] = (question.replace(" e ", " &amp; ", 1).replace("?", " &quot;de verdade&quot;?"), theme)
    return rows
