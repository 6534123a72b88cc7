"""Short causal questions as people type them, in Portuguese and in English, each under a known theme.

Unlike ``topic_corpus_pt`` (questions built from each theme's causes and effects), every question here was
written on its own: different openings, lengths and words, a few off the point, so they spread as a real
corpus of a few hundred questions does. Used by the topic tests and ``benchmarks/topics.py`` to measure the
share left in the residual topic and the adjusted Rand index against the themes.

``DUPLICATES`` and ``NOT_DUPLICATES`` are pairs written to calibrate the near-duplicate threshold: the same
question typed again (case, accents, punctuation, a word's spelling) and different questions on one theme.
"""

PT = {
    "saúde": """
Por que dormir pouco deixa a gente mais irritado?
O que acontece com o corpo se eu parar de comer açúcar?
Fumar causa mesmo câncer de pulmão?
Se eu caminhar todo dia minha pressão vai baixar?
Por que o sal em excesso faz mal ao coração?
Beber café demais pode causar ansiedade?
Qual o efeito do sedentarismo na saúde mental?
Se eu tivesse feito exercício antes, teria evitado a hérnia?
Comer muito ultraprocessado engorda mais do que comer a mesma caloria em comida natural?
A falta de vitamina D causa cansaço?
Por que quem bebe álcool todo dia tem problema no fígado?
O estresse no trabalho pode causar gastrite?
Tomar sol sem protetor aumenta o risco de câncer de pele?
Se eu dormir oito horas por noite vou ter mais memória?
Por que a obesidade aumenta o risco de diabetes?
Usar o celular antes de dormir atrapalha o sono?
Se eu reduzir o consumo de carne vermelha, o colesterol cai?
Por que idosos que fazem musculação caem menos?
Tomar antibiótico sem receita pode criar bactérias resistentes?
A poluição do ar causa asma em crianças?
Se a vacinação cair, o sarampo volta?
Por que ficar muito tempo sentado dá dor nas costas?
Beber pouca água causa pedra no rim?
A depressão pode ser causada por falta de sol no inverno?
Se eu parar de fumar hoje, meu pulmão se recupera?
Por que pessoas com diabetes demoram a cicatrizar?
Meditar reduz a pressão arterial?
O que causa enxaqueca em quem trabalha no computador?
Se eu tivesse ido ao médico mais cedo a infecção seria menor?
Açúcar causa cárie ou é a falta de escovação?
Por que o remédio para pressão dá tosse em algumas pessoas?
Correr faz mal para o joelho?
A ansiedade pode causar dor no peito?
Se todo mundo lavasse as mãos, haveria menos gripe?
Por que o jejum intermitente faz perder peso?
Dormir de barriga cheia causa refluxo?
Quem tem pressão alta deve evitar café?
Por que a gripe mata mais idosos?
Ficar no frio causa resfriado?
O que aconteceria com minha saúde se eu só comesse frutas?
""",
    "educação": """
Por que alunos de escola pública passam menos no vestibular?
Fazer faculdade aumenta o salário?
Se eu tivesse feito mestrado teria conseguido a vaga?
O ensino a distância aprende tanto quanto o presencial?
Por que estudar de madrugada rende menos?
Ler para as crianças melhora a alfabetização?
Se a escola tivesse tempo integral, a evasão cairia?
Ter aula de música melhora a nota em matemática?
Por que tantos estudantes largam o curso no primeiro ano?
Fazer cursinho pré-vestibular aumenta a chance de aprovação?
O uso de celular em sala de aula atrapalha o aprendizado?
Se o professor ganhasse mais, a qualidade do ensino subiria?
Por que quem faz intercâmbio arruma emprego mais rápido?
Estudar em grupo ajuda a passar nas provas?
As cotas aumentaram o número de negros na universidade?
Se eu trocasse de curso agora perderia muito tempo?
Por que a reprovação faz o aluno desistir da escola?
Aprender inglês cedo facilita a carreira?
A merenda escolar melhora a frequência dos alunos?
Por que o ENEM mudou o acesso à universidade?
Se eu estudar duas horas por dia passo na OAB?
Fazer estágio durante a graduação ajuda a conseguir emprego?
Por que alunos com bolsa do ProUni se formam mais?
A nota do ENEM prevê o desempenho na faculdade?
Se a escola proibisse o celular, as notas melhorariam?
Por que crianças que vão para a creche falam mais cedo?
Ter biblioteca em casa influencia o gosto pela leitura?
O doutorado vale a pena para quem quer trabalhar em empresa?
Por que o curso de medicina é tão concorrido?
Se eu tivesse estudado programação na escola, teria outra profissão?
Faltar muitas aulas derruba a nota?
Por que a educação infantil tem efeito no salário adulto?
Fazer simulados ajuda no vestibular?
A pandemia atrasou a alfabetização das crianças?
Se a faculdade fosse gratuita para todos, mais pobres estudariam?
Por que estudantes que trabalham têm notas menores?
Dormir bem antes da prova melhora o desempenho?
Professor com formação melhora o resultado da turma?
Por que o Brasil vai mal no PISA?
Trocar de escola no meio do ano prejudica o aluno?
""",
    "economia": """
Por que a inflação sobe quando o dólar sobe?
Se os juros caírem, as pessoas vão comprar mais carro?
O aumento do salário mínimo causa desemprego?
Por que o preço da gasolina afeta tudo no supermercado?
Se eu tivesse investido na poupança em vez do tesouro teria ganho menos?
A alta da Selic segura a inflação?
Por que o aluguel subiu tanto nas capitais?
Parcelar no cartão sai mais caro?
Se o governo imprimir dinheiro, a inflação aumenta?
Por que o real desvalorizou em relação ao dólar?
O Bolsa Família reduz a pobreza?
Se o imposto sobre importados cair, os eletrônicos ficam mais baratos?
Por que a bolsa caiu depois da eleição?
Atrasar a fatura do cartão aumenta a dívida muito rápido?
Se eu pagasse só o mínimo do cartão, quanto a dívida cresceria?
Por que o desemprego aumenta na crise?
A reforma da previdência diminuiu o déficit?
O preço da carne sobe por causa da exportação?
Se a safra for ruim, o preço do feijão sobe?
Por que o consumo cai quando a renda cai?
Comprar à vista com desconto vale mais do que investir?
A taxa de juros alta deixa a casa própria mais cara?
Por que o Pix reduziu o uso de dinheiro vivo?
Se o dólar cair, as viagens ao exterior ficam mais baratas?
O auxílio emergencial aumentou o consumo?
Por que as empresas demitem quando os juros sobem?
Investir em ações dá mais retorno a longo prazo?
Se eu tivesse comprado bitcoin em 2015, estaria rico?
Por que a energia elétrica ficou mais cara com a seca?
O fim da escala 6x1 reduziria a produtividade?
Por que o preço do café subiu no mundo todo?
A alta do IPTU aumenta o aluguel?
Se eu economizar dez por cento do salário, consigo me aposentar mais cedo?
Por que o frete caro deixa a comida mais cara?
O salário mínimo alto aumenta a informalidade?
Se o banco central subir os juros, minha prestação aumenta?
Por que tanta gente está endividada?
A greve dos caminhoneiros causou desabastecimento?
Se o Brasil exportar mais, o real se valoriza?
Por que o preço do ovo sobe na quaresma?
""",
    "animais": """
Por que meu gato vomita depois de comer ração?
Castrar o cachorro deixa ele mais calmo?
Se eu der chocolate para o cachorro ele passa mal?
Por que a cadela come grama?
Gato castrado engorda mais?
O que acontece se eu não vacinar meu cachorro?
Por que meu gato arranha o sofá?
Se eu tivesse adotado dois gatos, o primeiro ficaria menos sozinho?
Ração barata causa problema de rim em gato?
Por que o cachorro late quando fica sozinho?
Dar banho toda semana faz mal para o cachorro?
Se eu mudar a ração de repente, o gato pode ter diarreia?
Por que os gatos dormem tanto?
Passear todo dia deixa o cachorro menos ansioso?
O calor faz o cachorro perder apetite?
Por que meu coelho parou de comer?
Se eu castrar a gata, ela para de miar à noite?
Pulga causa anemia em filhote?
Por que o cachorro idoso fica cego?
Brincar com laser deixa o gato frustrado?
Se eu der leite para o gato ele passa mal?
Por que o papagaio arranca as próprias penas?
O veterinário disse que obesidade encurta a vida do cachorro, por quê?
Cachorro que dorme na cama fica mais apegado?
Por que gatos odeiam água?
Se o cachorro comer uva ele pode morrer?
Adestrar com petisco funciona melhor do que bronca?
Por que o aquário fica verde?
Gato que sai de casa vive menos?
Se eu tivesse vacinado o filhote, ele não teria pego parvovirose?
Por que o hamster morde?
Areia perfumada faz o gato fazer xixi fora da caixa?
Por que o cachorro come cocô?
A coleira antipulgas causa alergia?
Se eu deixar o cachorro preso ele fica agressivo?
Por que a tartaruga não come no inverno?
Escovar os dentes do cachorro evita mau hálito?
Por que o gato traz passarinho morto para casa?
Cachorro de raça fica mais doente?
O barulho dos fogos assusta tanto o cachorro por quê?
""",
    "tecnologia": """
Por que meu celular esquenta quando carrega?
Se eu deixar o notebook na tomada a bateria estraga?
Usar VPN deixa a internet mais lenta?
Por que o programa em Python é mais lento que em C?
Limpar o cache deixa o navegador mais rápido?
Se eu tivesse feito backup, teria perdido as fotos?
Por que o site caiu quando muita gente acessou?
Senha fraca causa invasão de conta?
Se o servidor tiver mais memória, o banco de dados fica mais rápido?
Por que o wifi cai quando o micro-ondas liga?
Atualizar o sistema deixa o celular lento?
Por que o código funciona na minha máquina e não no servidor?
Se eu trocar o HD por SSD o computador liga mais rápido?
A inteligência artificial vai causar desemprego?
Por que o aplicativo consome tanta bateria?
Baixar programa pirata causa vírus?
Se eu usar dois monitores, trabalho mais rápido?
Por que a internet fica lenta à noite?
O 5G faz mal à saúde?
Se a empresa tivesse testado o software, o bug não teria chegado ao cliente?
Por que o computador trava com muitas abas abertas?
Colocar o roteador no alto melhora o sinal?
Por que o deploy falhou depois da atualização da biblioteca?
Usar framework deixa o desenvolvimento mais rápido?
Se eu desligar o bluetooth, a bateria dura mais?
Por que o e-mail foi para o spam?
Mais núcleos no processador deixam o jogo mais rápido?
Se o banco de dados tivesse índice a consulta seria instantânea?
Por que o celular reinicia sozinho?
A rede social vicia por causa do algoritmo?
Se eu clicar em link de phishing, perco a conta?
Por que a impressora para de funcionar depois da atualização?
Programar em pares reduz os bugs?
Por que o vídeo trava na chamada?
Carregar o celular a noite toda estraga a bateria?
Se eu aumentar a RAM o computador fica mais rápido?
Por que o ChatGPT inventa respostas?
Usar o mesmo carregador para tudo estraga os aparelhos?
Se o site usasse cache, aguentaria mais acessos?
Por que o disco encheu sem eu salvar nada?
""",
}

EN = {
    "health": """
Why does sleeping too little make people irritable?
What happens to my body if I stop eating sugar?
Does smoking really cause lung cancer?
If I walk every day will my blood pressure go down?
Why is too much salt bad for the heart?
Can drinking a lot of coffee cause anxiety?
Does sitting all day cause back pain?
If I had exercised earlier, would I have avoided the injury?
Do ultra-processed foods make you gain more weight than the same calories of real food?
Does a lack of vitamin D cause tiredness?
Why do daily drinkers get liver disease?
Can work stress give you stomach ulcers?
Does sunbathing without sunscreen raise the risk of skin cancer?
Will sleeping eight hours improve my memory?
Why does obesity raise the risk of diabetes?
Does using the phone before bed ruin sleep?
If I eat less red meat will my cholesterol fall?
Why do older people who lift weights fall less?
Can taking antibiotics without a prescription breed resistant bacteria?
Does air pollution cause asthma in children?
If vaccination rates drop, will measles come back?
Why does dehydration give you headaches?
Does drinking too little water cause kidney stones?
Can winter darkness cause depression?
If I quit smoking today will my lungs recover?
Why do wounds heal slowly in people with diabetes?
Does meditation lower blood pressure?
What causes migraines in people who work at screens?
Would the infection have been milder if I had seen a doctor sooner?
Does sugar cause cavities or is it poor brushing?
Why do blood pressure pills make some people cough?
Is running bad for your knees?
Can anxiety cause chest pain?
If everyone washed their hands, would there be less flu?
Why does intermittent fasting make people lose weight?
Does eating late at night cause acid reflux?
Should people with high blood pressure avoid coffee?
Why does the flu kill more elderly people?
Does being out in the cold give you a cold?
What would happen to my health if I only ate fruit?
""",
    "education": """
Why do public school students do worse on entrance exams?
Does going to college raise your salary?
If I had done a master's degree would I have got the job?
Do students learn as much online as in person?
Why is studying late at night less effective?
Does reading to children improve their literacy?
If schools ran all day, would dropout rates fall?
Do music lessons improve math grades?
Why do so many students drop out in their first year?
Does a prep course raise the chance of passing the exam?
Do phones in the classroom hurt learning?
If teachers were paid more, would teaching get better?
Why do students who study abroad find jobs faster?
Does studying in groups help you pass exams?
Did affirmative action increase the number of Black students at university?
If I switched majors now would I lose a lot of time?
Why does repeating a grade make students quit school?
Does learning English early help your career?
Do school lunches improve attendance?
Why did the national exam change who gets into university?
If I study two hours a day will I pass the bar exam?
Does an internship during college help you get hired?
Why do scholarship students graduate more often?
Does the entrance exam score predict college grades?
If schools banned phones, would grades improve?
Why do children who attend daycare talk earlier?
Does having books at home make kids like reading?
Is a PhD worth it for someone who wants to work in industry?
Why is medical school so competitive?
If I had learned programming at school would I have another career?
Does missing many classes lower your grade?
Why does early childhood education affect adult earnings?
Do practice tests help on exam day?
Did the pandemic delay children's reading skills?
If college were free for everyone, would more poor students enroll?
Why do students who work have lower grades?
Does sleeping well before a test improve the score?
Do trained teachers improve their class's results?
Why do some countries score so low on PISA?
Does changing schools mid-year hurt a student?
""",
    "economy": """
Why does inflation rise when the dollar rises?
If interest rates fall, will people buy more cars?
Does raising the minimum wage cause unemployment?
Why does the price of gas affect everything at the supermarket?
Would I have earned less in a savings account than in bonds?
Does raising interest rates hold inflation down?
Why have rents gone up so much in big cities?
Is paying in installments more expensive?
If the government prints money, does inflation go up?
Why did the currency lose value against the dollar?
Do cash transfer programs reduce poverty?
If import taxes fall, will electronics get cheaper?
Why did the stock market drop after the election?
Does paying the credit card bill late make the debt grow fast?
If I paid only the minimum on my card, how fast would the debt grow?
Why does unemployment rise in a recession?
Did the pension reform reduce the deficit?
Does beef get more expensive because of exports?
If the harvest is bad, will bean prices go up?
Why does spending fall when incomes fall?
Is paying cash with a discount better than investing the money?
Do high interest rates make buying a house more expensive?
Why did instant payments reduce the use of cash?
If the dollar falls, will trips abroad get cheaper?
Did the emergency aid increase consumption?
Why do companies lay people off when rates go up?
Do stocks pay more than bonds in the long run?
If I had bought bitcoin in 2015, would I be rich now?
Why did electricity get more expensive during the drought?
Would a four-day week reduce productivity?
Why did coffee prices go up all over the world?
Does a higher property tax push rents up?
If I save ten percent of my salary can I retire earlier?
Why does expensive shipping make food cost more?
Does a high minimum wage push workers into informal jobs?
If the central bank raises rates, will my mortgage payment go up?
Why are so many families in debt?
Did the truckers' strike cause shortages?
If the country exports more, will its currency get stronger?
Why do egg prices rise before Easter?
""",
    "pets": """
Why does my cat throw up after eating dry food?
Does neutering a dog make it calmer?
If I give my dog chocolate will it get sick?
Why does my dog eat grass?
Do neutered cats gain more weight?
What happens if I don't vaccinate my dog?
Why does my cat scratch the couch?
If I had adopted two cats, would the first one be less lonely?
Does cheap cat food cause kidney problems?
Why does my dog bark when it's left alone?
Is bathing a dog every week bad for its skin?
If I switch food suddenly, can my cat get diarrhea?
Why do cats sleep so much?
Do daily walks make a dog less anxious?
Does hot weather make dogs lose their appetite?
Why did my rabbit stop eating?
If I spay my cat will she stop yowling at night?
Can fleas cause anemia in puppies?
Why do old dogs go blind?
Does playing with a laser pointer frustrate cats?
If I give my cat milk will it get sick?
Why does my parrot pull out its feathers?
Why does obesity shorten a dog's life?
Do dogs that sleep in the bed get more attached?
Why do cats hate water?
Can a dog die from eating grapes?
Does training with treats work better than scolding?
Why does the fish tank turn green?
Do outdoor cats live shorter lives?
If I had vaccinated the puppy, would it have avoided parvo?
Why does my hamster bite?
Does scented litter make cats pee outside the box?
Why do dogs eat poop?
Can a flea collar cause allergies?
If I keep my dog tied up will it become aggressive?
Why does my turtle stop eating in winter?
Does brushing a dog's teeth prevent bad breath?
Why does my cat bring dead birds home?
Do purebred dogs get sick more often?
Why are dogs so scared of fireworks?
""",
    "technology": """
Why does my phone get hot while charging?
If I leave my laptop plugged in, will the battery wear out?
Does using a VPN slow down the internet?
Why is a Python program slower than the same one in C?
Does clearing the cache make the browser faster?
If I had made a backup, would I have lost the photos?
Why did the website crash when many people visited?
Do weak passwords cause hacked accounts?
If the server had more memory, would the database be faster?
Why does the wifi drop when the microwave is on?
Do system updates make phones slower?
Why does the code work on my machine but not on the server?
If I replace the hard drive with an SSD will the computer boot faster?
Will artificial intelligence cause unemployment?
Why does the app drain so much battery?
Does downloading pirated software give you viruses?
If I use two monitors will I work faster?
Why is the internet slow at night?
Is 5G bad for your health?
If the company had tested the software, would the bug have reached the customer?
Why does the computer freeze with many tabs open?
Does putting the router up high improve the signal?
Why did the deploy fail after the library update?
Does using a framework make development faster?
If I turn off bluetooth will the battery last longer?
Why did my email land in spam?
Do more processor cores make games run faster?
If the table had an index would the query be instant?
Why does my phone restart by itself?
Are social networks addictive because of the algorithm?
If I click a phishing link will I lose my account?
Why does the printer stop working after an update?
Does pair programming reduce bugs?
Why does the video freeze during calls?
Does charging the phone overnight ruin the battery?
If I add more RAM will the computer be faster?
Why does ChatGPT make up answers?
Does using one charger for everything damage devices?
If the site used a cache, could it handle more visitors?
Why did my disk fill up when I saved nothing?
""",
}

# The same question typed again: what a near-duplicate check must find with the default model.
DUPLICATES = [
    ("Por que dormir pouco deixa a gente mais irritado?", "por que dormir pouco deixa a gente mais irritado"),
    ("Fumar causa mesmo câncer de pulmão?", "Fumar causa mesmo cancer de pulmao?"),
    ("Castrar o cachorro deixa ele mais calmo?", "Castrar o cachorro deixa ele mais calmo ?"),
    ("Por que a inflação sobe quando o dólar sobe?", "Por que a inflação sobe quando o dólar sobe??"),
    ("Usar VPN deixa a internet mais lenta?", "Usar VPN deixa a internet  mais lenta?"),
    ("Does smoking really cause lung cancer?", "does smoking really cause lung cancer"),
    ("Why does my dog eat grass?", "Why does my dog eat grass ?"),
    (
        "Does raising the minimum wage cause unemployment?",
        "Does raising the minimum-wage cause unemployment?",
    ),
    ("If I add more RAM will the computer be faster?", "If I add more RAM, will the computer be faster?"),
    ("Por que o cachorro come cocô?", "Por que o cachorro come cocô?"),
]
# Different questions on one theme: what a near-duplicate check must leave alone.
NOT_DUPLICATES = [
    ("Por que o gato vomita depois de comer ração?", "Por que o cachorro vomita depois de comer ração?"),
    (
        "Se os juros caírem, as pessoas vão comprar mais carro?",
        "Se os juros subirem, as pessoas vão comprar menos carro?",
    ),
    ("Fumar causa câncer de pulmão?", "Fumar causa câncer de boca?"),
    ("Does sitting all day cause back pain?", "Does standing all day cause back pain?"),
    ("Why does my cat scratch the couch?", "Why does my dog scratch the door?"),
    ("Does using a VPN slow down the internet?", "Does using a proxy slow down the internet?"),
]


def questions(language: str = "pt") -> list[tuple[str, str]]:
    """(question, theme) pairs of one language, in the order written."""
    corpus = PT if language == "pt" else EN
    return [
        (line.strip(), theme)
        for theme, block in corpus.items()
        for line in block.strip().splitlines()
        if line.strip()
    ]
