"""Write the synthetic, Wikidata-shaped demo snapshot ``wikidata-demo.nt.gz``.

The snapshot is NOT real Wikidata. Every label is invented from syllable and name
tables, every description starts with ``[demo] `` and every entity id except the
category classes from ``resources/categories.json``, Q5 (human) and Q6256 (country)
is synthetic (``Q990000001`` and up). It uses Wikidata's RDF vocabulary exactly as the
Wikidata Query Service does (wd:/wdt:/p:/ps:/wikibase:/schema:/skos:), so the app can
run its live SPARQL queries against it through pyoxigraph when offline.

``wikibase:statements`` is drawn from a heavy-tailed (lognormal) distribution and is the
popularity signal; only the first ``CLAIM_CAP`` statements of each entity are
materialised as ``p:``/``ps:`` statement nodes to keep the file small.

Run: ``.venv/bin/python -m resources.demo.make_snapshot [--output PATH]``.
The output is deterministic: fixed seed, sorted lines, gzip with ``mtime=0``.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import numpy as np

SEED = 20261121
CLAIM_CAP = 8
FIRST_SYNTHETIC_QID = 990_000_001
OUTPUT = Path(__file__).with_name("wikidata-demo.nt.gz")
CATEGORIES_JSON = Path(__file__).resolve().parents[1] / "categories.json"
LANGS: tuple[str, str, str] = ("en", "it", "es")

WD = "http://www.wikidata.org/entity/"
WDT = "http://www.wikidata.org/prop/direct/"
P_NS = "http://www.wikidata.org/prop/"
PS = "http://www.wikidata.org/prop/statement/"
PQ = "http://www.wikidata.org/prop/qualifier/"
WDS = "http://www.wikidata.org/entity/statement/"
WIKIBASE = "http://wikiba.se/ontology#"
SCHEMA = "http://schema.org/"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
SKOS = "http://www.w3.org/2004/02/skos/core#"
XSD = "http://www.w3.org/2001/XMLSchema#"
GENID = "http://www.wikidata.org/.well-known/genid/"
GEO_WKT = "http://www.opengis.net/ont/geosparql#wktLiteral"
COMMONS = "http://commons.wikimedia.org/wiki/Special:FilePath/"

# Category sizes (members created directly in the category).
SIZES: dict[str, int] = {
    "City": 2000,
    "Taxon": 2000,
    "Politician": 1800,
    "Athlete": 2000,
    "Artist": 1800,
    "Painting": 1500,
    "WrittenWork": 1500,
    "Company": 1500,
    "Building": 1500,
    "ChemicalCompound": 1500,
    "Mountain": 1500,
    "River": 1500,
    "Street": 1500,
    "Airport": 400,
    "Astronaut": 250,
    "CelestialBody": 700,
    "ComicsCharacter": 400,
    "Food": 500,
    "MeanOfTransportation": 500,
    "Model": 300,
    "Monument": 500,
    "SportsTeam": 600,
    "University": 500,
}
# Median of the lognormal statement-count draw (log scale) per category.
STATEMENT_MU: dict[str, float] = {
    "City": 1.9,
    "Politician": 1.7,
    "Athlete": 1.6,
    "Artist": 1.7,
    "Astronaut": 2.2,
    "Model": 1.4,
    "Company": 1.6,
    "University": 2.0,
    "Taxon": 1.3,
    "Painting": 1.4,
    "WrittenWork": 1.4,
    "CelestialBody": 1.5,
    "ChemicalCompound": 1.8,
}
STATEMENT_SIGMA = 1.5

# pid: (en, it, es, wikibase property type)
PROPERTIES: dict[str, tuple[str, str, str, str]] = {
    "P31": ("instance of", "istanza di", "instancia de", "WikibaseItem"),
    "P279": ("subclass of", "sottoclasse di", "subclase de", "WikibaseItem"),
    "P17": ("country", "Paese", "país", "WikibaseItem"),
    "P131": (
        "located in the administrative territorial entity",
        "situato nell'entità territoriale amministrativa",
        "ubicado en la entidad territorial administrativa",
        "WikibaseItem",
    ),
    "P36": ("capital", "capitale", "capital", "WikibaseItem"),
    "P1376": ("capital of", "capitale di", "capital de", "WikibaseItem"),
    "P1082": ("population", "popolazione", "población", "Quantity"),
    "P571": (
        "inception",
        "data di fondazione o creazione",
        "fecha de fundación o creación",
        "Time",
    ),
    "P569": ("date of birth", "data di nascita", "fecha de nacimiento", "Time"),
    "P570": ("date of death", "data di morte", "fecha de fallecimiento", "Time"),
    "P19": ("place of birth", "luogo di nascita", "lugar de nacimiento", "WikibaseItem"),
    "P27": ("country of citizenship", "cittadinanza", "país de nacionalidad", "WikibaseItem"),
    "P106": ("occupation", "occupazione", "ocupación", "WikibaseItem"),
    "P108": ("employer", "datore di lavoro", "empleador", "WikibaseItem"),
    "P69": ("educated at", "istruito presso", "educado en", "WikibaseItem"),
    "P159": ("headquarters location", "sede", "sede", "WikibaseItem"),
    "P452": ("industry", "settore", "industria", "WikibaseItem"),
    "P112": ("founded by", "fondatore", "fundador", "WikibaseItem"),
    "P1128": ("employees", "numero di dipendenti", "número de empleados", "Quantity"),
    "P2044": ("elevation above sea level", "altitudine", "altitud", "Quantity"),
    "P403": ("mouth of the watercourse", "foce", "desembocadura", "WikibaseItem"),
    "P885": ("origin of the watercourse", "sorgente", "origen del curso de agua", "WikibaseItem"),
    "P2043": ("length", "lunghezza", "longitud", "Quantity"),
    "P170": ("creator", "autore", "creador", "WikibaseItem"),
    "P50": ("author", "autore", "autor", "WikibaseItem"),
    "P495": ("country of origin", "paese di origine", "país de origen", "WikibaseItem"),
    "P136": ("genre", "genere", "género", "WikibaseItem"),
    "P276": ("location", "luogo", "ubicación", "WikibaseItem"),
    "P84": ("architect", "architetto", "arquitecto", "WikibaseItem"),
    "P149": (
        "architectural style",
        "stile architettonico",
        "estilo arquitectónico",
        "WikibaseItem",
    ),
    "P138": ("named after", "intitolato a", "nombrado en honor a", "WikibaseItem"),
    "P214": ("VIAF ID", "identificativo VIAF", "identificador VIAF", "ExternalId"),
    "P231": ("CAS Registry Number", "numero CAS", "número CAS", "ExternalId"),
    "P856": ("official website", "sito web ufficiale", "sitio web oficial", "Url"),
    "P18": ("image", "immagine", "imagen", "CommonsMedia"),
    "P625": ("coordinate location", "coordinate geografiche", "coordenadas", "GlobeCoordinate"),
    "P1448": ("official name", "nome ufficiale", "nombre oficial", "Monolingualtext"),
    "P1476": ("title", "titolo", "título", "Monolingualtext"),
    "P1843": ("taxon common name", "nome comune", "nombre común", "Monolingualtext"),
    "P171": (
        "parent taxon",
        "taxon di livello superiore",
        "taxón superior inmediato",
        "WikibaseItem",
    ),
    "P105": ("taxon rank", "livello tassonomico", "categoría taxonómica", "WikibaseItem"),
    "P225": ("taxon name", "nome scientifico", "nombre del taxón", "String"),
    "P274": ("chemical formula", "formula chimica", "fórmula química", "String"),
    "P2067": ("mass", "massa", "masa", "Quantity"),
    "P2048": ("height", "altezza", "altura", "Quantity"),
    "P2049": ("width", "larghezza", "anchura", "Quantity"),
    "P2120": ("radius", "raggio", "radio", "Quantity"),
    "P54": (
        "member of sports team",
        "membro della squadra sportiva",
        "miembro del equipo deportivo",
        "WikibaseItem",
    ),
    "P413": ("position played on team / speciality", "ruolo", "posición de juego", "WikibaseItem"),
    "P641": ("sport", "sport", "deporte", "WikibaseItem"),
    "P118": ("league", "lega", "liga", "WikibaseItem"),
    "P115": ("home venue", "impianto sportivo", "estadio", "WikibaseItem"),
    "P577": ("publication date", "data di pubblicazione", "fecha de publicación", "Time"),
    "P1441": ("present in work", "presente nell'opera", "presente en la obra", "WikibaseItem"),
    "P186": ("made from material", "materiale", "material", "WikibaseItem"),
    "P176": ("manufacturer", "produttore", "fabricante", "WikibaseItem"),
    "P397": (
        "parent astronomical body",
        "corpo celeste padre",
        "cuerpo astronómico padre",
        "WikibaseItem",
    ),
    "P575": (
        "time of discovery or invention",
        "data di scoperta o invenzione",
        "fecha de descubrimiento o invención",
        "Time",
    ),
    "P61": (
        "discoverer or inventor",
        "scopritore o inventore",
        "descubridor o inventor",
        "WikibaseItem",
    ),
    "P580": ("start time", "data di inizio", "fecha de inicio", "Time"),
}

# Real labels of the real class items (category classes, Q5, Q6256).
CLASS_LABELS: dict[str, tuple[str, str, str]] = {
    "Q1248784": ("airport", "aeroporto", "aeropuerto"),
    "Q483501": ("artist", "artista", "artista"),
    "Q11631": ("astronaut", "astronauta", "astronauta"),
    "Q2066131": ("athlete", "atleta", "atleta"),
    "Q41176": ("building", "edificio", "edificio"),
    "Q6999": ("astronomical object", "oggetto astronomico", "objeto astronómico"),
    "Q515": ("city", "città", "ciudad"),
    "Q1114461": ("comics character", "personaggio dei fumetti", "personaje de historieta"),
    "Q783794": ("company", "azienda", "empresa"),
    "Q2095": ("food", "alimento", "alimento"),
    "Q334166": ("mode of transport", "mezzo di trasporto", "medio de transporte"),
    "Q4610556": ("model", "modello", "modelo"),
    "Q4989906": ("monument", "monumento", "monumento"),
    "Q82955": ("politician", "politico", "político"),
    "Q4022": ("river", "fiume", "río"),
    "Q12973014": ("sports team", "squadra sportiva", "equipo deportivo"),
    "Q3918": ("university", "università", "universidad"),
    "Q47461344": ("written work", "opera scritta", "obra escrita"),
    "Q11173": ("chemical compound", "composto chimico", "compuesto químico"),
    "Q8502": ("mountain", "montagna", "montaña"),
    "Q3305213": ("painting", "dipinto", "pintura"),
    "Q79007": ("street", "strada", "calle"),
    "Q16521": ("taxon", "taxon", "taxón"),
    "Q5": ("human", "essere umano", "ser humano"),
    "Q6256": ("country", "paese", "país"),
}

# Synthetic subclasses (label triple, share of the category's members typed with them).
SUBCLASSES: dict[str, list[tuple[tuple[str, str, str], float]]] = {
    "City": [
        (("big city", "grande città", "gran ciudad"), 0.15),
        (("port city", "città portuale", "ciudad portuaria"), 0.1),
    ],
    "Artist": [
        (("painter", "pittore", "pintor"), 0.35),
        (("sculptor", "scultore", "escultor"), 0.15),
        (("architect", "architetto", "arquitecto"), 0.15),
        (("photographer", "fotografo", "fotógrafo"), 0.1),
    ],
    "Athlete": [
        (("association football player", "calciatore", "futbolista"), 0.4),
        (("basketball player", "cestista", "baloncestista"), 0.15),
        (("volleyball player", "pallavolista", "voleibolista"), 0.1),
        (("ice hockey player", "hockeista su ghiaccio", "jugador de hockey sobre hielo"), 0.1),
        (("handball player", "pallamanista", "balonmanista"), 0.1),
    ],
    "Politician": [(("legislator", "legislatore", "legislador"), 0.2)],
    "Model": [(("fashion model", "modello di moda", "modelo de moda"), 0.5)],
    "Building": [
        (("museum building", "edificio museale", "edificio de museo"), 0.15),
        (("church building", "chiesa", "iglesia"), 0.2),
        (("skyscraper", "grattacielo", "rascacielos"), 0.1),
        (("castle", "castello", "castillo"), 0.1),
        (("stadium", "stadio", "estadio"), 0.1),
    ],
    "Monument": [
        (("statue", "statua", "estatua"), 0.4),
        (("memorial", "memoriale", "memorial"), 0.3),
    ],
    "Company": [(("public company", "società per azioni", "sociedad anónima"), 0.3)],
    "University": [
        (("public university", "università pubblica", "universidad pública"), 0.4),
        (("technical university", "politecnico", "universidad técnica"), 0.2),
    ],
    "WrittenWork": [(("literary work", "opera letteraria", "obra literaria"), 0.7)],
    "Mountain": [(("volcano", "vulcano", "volcán"), 0.1)],
    "Street": [(("avenue", "viale", "avenida"), 0.2)],
    "ChemicalCompound": [(("organic compound", "composto organico", "compuesto orgánico"), 0.4)],
    "CelestialBody": [
        (("asteroid", "asteroide", "asteroide"), 0.5),
        (("star", "stella", "estrella"), 0.2),
        (("planet", "pianeta", "planeta"), 0.1),
        (("natural satellite", "satellite naturale", "satélite natural"), 0.1),
    ],
    "Food": [
        (("dish", "piatto", "plato"), 0.4),
        (("cheese", "formaggio", "queso"), 0.2),
        (("dessert", "dolce", "postre"), 0.2),
    ],
    "MeanOfTransportation": [
        (("automobile model", "modello di automobile", "modelo de automóvil"), 0.5),
        (("aircraft model", "modello di aeromobile", "modelo de aeronave"), 0.3),
    ],
    "SportsTeam": [
        (("association football club", "società calcistica", "club de fútbol"), 0.5),
        (("basketball team", "squadra di pallacanestro", "equipo de baloncesto"), 0.2),
    ],
    "Airport": [
        (("international airport", "aeroporto internazionale", "aeropuerto internacional"), 0.3)
    ],
    "ComicsCharacter": [(("superhero", "supereroe", "superhéroe"), 0.3)],
}

VALUE_ITEMS: dict[str, list[tuple[str, str, str]]] = {
    "sport": [
        ("association football", "calcio", "fútbol"),
        ("basketball", "pallacanestro", "baloncesto"),
        ("volleyball", "pallavolo", "voleibol"),
        ("ice hockey", "hockey su ghiaccio", "hockey sobre hielo"),
        ("handball", "pallamano", "balonmano"),
        ("rugby union", "rugby a 15", "rugby union"),
    ],
    "position": [
        ("forward", "attaccante", "delantero"),
        ("midfielder", "centrocampista", "centrocampista"),
        ("defender", "difensore", "defensa"),
        ("goalkeeper", "portiere", "portero"),
        ("point guard", "playmaker", "base"),
        ("centre", "centro", "pívot"),
        ("winger", "ala", "extremo"),
    ],
    "literary genre": [
        ("novel", "romanzo", "novela"),
        ("poetry", "poesia", "poesía"),
        ("short story", "racconto", "cuento"),
        ("essay", "saggio", "ensayo"),
        ("drama", "dramma", "drama"),
        ("science fiction", "fantascienza", "ciencia ficción"),
        ("fantasy", "fantasy", "fantasía"),
        ("crime fiction", "giallo", "novela policíaca"),
        ("biography", "biografia", "biografía"),
        ("historical novel", "romanzo storico", "novela histórica"),
    ],
    "painting genre": [
        ("portrait", "ritratto", "retrato"),
        ("landscape art", "paesaggio", "paisaje"),
        ("still life", "natura morta", "naturaleza muerta"),
        ("genre painting", "pittura di genere", "pintura de género"),
        ("history painting", "pittura storica", "pintura de historia"),
        ("religious art", "arte sacra", "arte religioso"),
        ("marine art", "marina", "marina"),
        ("abstract art", "arte astratta", "arte abstracto"),
    ],
    "architectural style": [
        ("Gothic architecture", "architettura gotica", "arquitectura gótica"),
        ("Baroque architecture", "architettura barocca", "arquitectura barroca"),
        ("Romanesque architecture", "architettura romanica", "arquitectura románica"),
        ("Neoclassical architecture", "architettura neoclassica", "arquitectura neoclásica"),
        ("Art Nouveau", "Liberty", "modernismo"),
        ("Art Deco", "Art déco", "art déco"),
        ("Brutalist architecture", "brutalismo", "brutalismo"),
        ("Renaissance architecture", "architettura rinascimentale", "arquitectura renacentista"),
    ],
    "industry": [
        ("banking", "settore bancario", "banca"),
        ("software industry", "industria del software", "industria del software"),
        ("automotive industry", "industria automobilistica", "industria automotriz"),
        ("aerospace industry", "industria aerospaziale", "industria aeroespacial"),
        ("retail", "commercio al dettaglio", "comercio minorista"),
        ("telecommunications", "telecomunicazioni", "telecomunicaciones"),
        ("pharmaceutical industry", "industria farmaceutica", "industria farmacéutica"),
        ("energy industry", "settore energetico", "sector energético"),
        ("food industry", "industria alimentare", "industria alimentaria"),
        ("construction", "edilizia", "construcción"),
        ("publishing", "editoria", "industria editorial"),
        ("mining", "industria mineraria", "minería"),
    ],
    "taxon rank": [
        ("order", "ordine", "orden"),
        ("family", "famiglia", "familia"),
        ("genus", "genere", "género"),
        ("species", "specie", "especie"),
    ],
}
VALUE_KIND_DESC: dict[str, tuple[str, str, str]] = {
    "sport": ("team sport", "sport di squadra", "deporte de equipo"),
    "position": ("playing position", "ruolo sportivo", "posición de juego"),
    "literary genre": ("literary genre", "genere letterario", "género literario"),
    "painting genre": ("genre of painting", "genere pittorico", "género pictórico"),
    "architectural style": ("architectural style", "stile architettonico", "estilo arquitectónico"),
    "industry": ("industry", "settore economico", "sector económico"),
    "taxon rank": ("taxonomic rank", "livello tassonomico", "categoría taxonómica"),
    "league": ("sports league", "lega sportiva", "liga deportiva"),
}
SPORT_OF_SUBCLASS = {
    "association football player": 0,
    "basketball player": 1,
    "volleyball player": 2,
    "ice hockey player": 3,
    "handball player": 4,
    "association football club": 0,
    "basketball team": 1,
}

# --- name tables ---------------------------------------------------------------------------
PLACE_A = [
    "Val",
    "Or",
    "Mar",
    "Bel",
    "Cas",
    "Tor",
    "Ser",
    "Lun",
    "Ver",
    "Ald",
    "Fen",
    "Ros",
    "Gal",
    "Dor",
    "Sil",
    "Mon",
    "Bran",
    "Cor",
    "Ten",
    "Pal",
    "Ar",
    "Es",
    "Quel",
    "Lor",
    "Mir",
    "Tal",
    "Ner",
    "Vic",
    "Sar",
    "Ost",
    "Cam",
    "Riv",
]
PLACE_B = ["a", "e", "i", "o", "ra", "ri", "le", "do", "ve", "", "an", "en", "ol", "ar"]
PLACE_C = [
    "ria",
    "na",
    "ssa",
    "no",
    "dia",
    "ton",
    "burg",
    "ville",
    "mont",
    "polis",
    "era",
    "ano",
    "ia",
    "eto",
    "sk",
    "grad",
    "heim",
    "ford",
    "bury",
    "ona",
    "ago",
    "ez",
]
COUNTRY_C = ["ia", "land", "ora", "istan", "avia", "onia", "eria", "ana", "esia", "ica"]
RIVER_A = [
    "Orv",
    "Tam",
    "Sel",
    "Dra",
    "Is",
    "Lim",
    "Mor",
    "Ebr",
    "Tav",
    "Ner",
    "Alz",
    "Ves",
    "Gar",
    "Rhen",
    "Sav",
    "Ard",
    "Lys",
    "Kal",
    "Tes",
    "Obr",
    "Vil",
    "Mur",
    "Dun",
    "Ist",
    "Sor",
    "Pel",
    "Aus",
    "Ily",
    "Sam",
    "Trev",
]
RIVER_M = ["", "an", "er", "ol", "im", "ar"]
RIVER_B = [
    "el",
    "a",
    "on",
    "ine",
    "ava",
    "era",
    "is",
    "ent",
    "ore",
    "uba",
    "ilo",
    "ach",
    "ess",
    "ing",
    "ara",
    "une",
    "et",
    "ova",
]
GIVEN = [
    "Adriana",
    "Alessio",
    "Amara",
    "Anselm",
    "Beatriz",
    "Bruno",
    "Camila",
    "Cesare",
    "Dalia",
    "Dario",
    "Elena",
    "Emil",
    "Fabio",
    "Farida",
    "Giulia",
    "Gregor",
    "Helena",
    "Hugo",
    "Ines",
    "Ivo",
    "Jana",
    "Joaquín",
    "Karin",
    "Lars",
    "Leonor",
    "Lucas",
    "Mara",
    "Matteo",
    "Mireia",
    "Nadia",
    "Nils",
    "Olga",
    "Oscar",
    "Paola",
    "Pavel",
    "Rafael",
    "Rosa",
    "Sandro",
    "Sofia",
    "Teodor",
    "Tomas",
    "Ursula",
    "Valentina",
    "Viktor",
    "Yara",
    "Zeno",
    "Amalia",
    "Bastian",
    "Clara",
    "Diego",
    "Edith",
    "Felix",
    "Greta",
    "Hector",
    "Irene",
    "Julian",
    "Livia",
    "Marco",
    "Noemi",
    "Otto",
    "Selma",
    "Tobias",
]
FAM_A = [
    "Bar",
    "Cal",
    "Dem",
    "Fer",
    "Gor",
    "Hal",
    "Ister",
    "Kov",
    "Lom",
    "Mar",
    "Nov",
    "Ors",
    "Pell",
    "Quin",
    "Rov",
    "Sal",
    "Tor",
    "Ulm",
    "Vas",
    "Wend",
    "Zan",
    "Alv",
    "Ber",
    "Cor",
    "Dun",
    "Esc",
    "Gal",
    "Lind",
    "Mont",
    "Rib",
]
FAM_B = [
    "ani",
    "ero",
    "ski",
    "sen",
    "ova",
    "ez",
    "etti",
    "berg",
    "ini",
    "ard",
    "owski",
    "ström",
    "ado",
    "elli",
    "ic",
    "mann",
    "ot",
    "ides",
    "ura",
    "vik",
]
BRAND_A = [
    "Velt",
    "Orv",
    "Nex",
    "Kal",
    "Tri",
    "Zen",
    "Lum",
    "Astr",
    "Cor",
    "Vir",
    "Sol",
    "Qu",
    "Ter",
    "Hel",
    "Mag",
    "Pyr",
    "Stel",
    "Ard",
    "Bor",
    "Fal",
]
BRAND_B = ["ix", "ana", "ora", "en", "is", "ex", "on", "ia", "um", "ar", "elle", "o"]
BRAND_SUFFIX = [
    "Systems",
    "Motors",
    "Group",
    "Holdings",
    "Industries",
    "Bank",
    "Foods",
    "Energy",
    "Airlines",
    "Telecom",
    "Pharma",
    "Works",
    "Media",
    "Labs",
]
GENUS_A = [
    "Orv",
    "Cal",
    "Tham",
    "Lep",
    "Myr",
    "Stren",
    "Phyl",
    "Ast",
    "Bry",
    "Cten",
    "Dasy",
    "Eri",
    "Glyph",
    "Hal",
    "Ixo",
    "Lamp",
    "Mel",
    "Nyct",
    "Oxy",
    "Ptil",
    "Rhod",
    "Sor",
    "Tric",
    "Xan",
    "Zyg",
]
GENUS_M = ["", "o", "an", "i", "ero", "ul", "yph"]
GENUS_B = ["ia", "us", "ella", "opsis", "ites", "odon", "ura", "anthus", "ops", "ina", "aria"]
EPITHETS = [
    "montana",
    "vulgaris",
    "alba",
    "minor",
    "major",
    "borealis",
    "sylvestris",
    "orientalis",
    "occidentalis",
    "gracilis",
    "robusta",
    "nigra",
    "rubra",
    "australis",
    "palustris",
    "elegans",
    "tenuis",
    "maritima",
    "alpina",
    "latifolia",
    "aurea",
    "fusca",
    "virens",
    "hirsuta",
    "lutea",
]
CHEM_PRE = [
    "methyl",
    "ethyl",
    "propyl",
    "chloro",
    "bromo",
    "hydroxy",
    "amino",
    "nitro",
    "fluoro",
    "acetyl",
    "dimethyl",
    "trichloro",
    "phenyl",
    "cyano",
]
CHEM_STEM = [
    "benz",
    "phen",
    "naphth",
    "pyr",
    "tol",
    "anil",
    "indol",
    "quinol",
    "furan",
    "thioph",
    "cyclohex",
    "but",
    "pent",
    "oxal",
]
CHEM_SUF = ["ol", "ene", "ane", "ate", "ide", "amine", "one", "al", "oic acid", "yl ether"]
WORK_ADJ = [
    "Silent",
    "Last",
    "Hidden",
    "Distant",
    "Burning",
    "Forgotten",
    "Golden",
    "Broken",
    "Northern",
    "Quiet",
    "Endless",
    "Crimson",
    "Winter",
    "Seventh",
    "Lost",
]
WORK_NOUN = [
    "Harbour",
    "Garden",
    "Letters",
    "Bridge",
    "Orchard",
    "Kingdom",
    "Mirror",
    "Season",
    "Voyage",
    "Lantern",
    "Archive",
    "Island",
    "River",
    "Tower",
    "Shadows",
]
HERO_A = [
    "Captain",
    "Doctor",
    "Lady",
    "Professor",
    "Agent",
    "Mister",
    "Night",
    "Iron",
    "Silver",
    "Storm",
]
HERO_B = [
    "Comet",
    "Falcon",
    "Viper",
    "Phantom",
    "Tide",
    "Ember",
    "Quasar",
    "Raven",
    "Spark",
    "Warden",
    "Glacier",
    "Mantis",
    "Nova",
    "Onyx",
]
FRUITS = [
    ("Pears", "pere", "peras"),
    ("Lemons", "limoni", "limones"),
    ("Grapes", "uva", "uvas"),
    ("Flowers", "fiori", "flores"),
    ("Oysters", "ostriche", "ostras"),
    ("Apples", "mele", "manzanas"),
    ("a Lute", "liuto", "laúd"),
]
VEHICLE_NAMES = [
    "Aurora",
    "Vento",
    "Strada",
    "Falco",
    "Meridian",
    "Orion",
    "Sirocco",
    "Tempo",
    "Atlas",
    "Lince",
    "Corsa",
    "Zephyr",
    "Nimbus",
    "Condor",
    "Vega",
]


# --- model ---------------------------------------------------------------------------------
@dataclass
class Entity:
    qid: str
    category: str | None
    labels: dict[str, str]
    descriptions: dict[str, str]
    members: list[tuple[str, str]] = field(default_factory=list)  # (P31|P106|P279, qid)
    ctx: dict[str, Any] = field(default_factory=dict)
    aliases: dict[str, list[str]] = field(default_factory=dict)
    statements: int = 0
    sitelinks: int = 0
    wikis: tuple[str, ...] = ()
    fixed_popularity: bool = False


@dataclass
class Statement:
    pid: str
    value: str  # N-Triples object term
    rank: str = "NormalRank"


def escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def lit(text: str, lang: str | None = None) -> str:
    return f'"{escape(text)}"@{lang}' if lang else f'"{escape(text)}"'


def item(qid: str) -> str:
    return f"<{WD}{qid}>"


def time_value(year: int, month: int = 1, day: int = 1) -> str:
    return f'"{year:04d}-{month:02d}-{day:02d}T00:00:00Z"^^<{XSD}dateTime>'


def quantity(value: float, decimals: int = 0) -> str:
    text = f"{value:.{decimals}f}"
    if not text.startswith("-"):
        text = "+" + text
    return f'"{text}"^^<{XSD}decimal>'


def coordinate(lon: float, lat: float) -> str:
    return f'"Point({lon:.4f} {lat:.4f})"^^<{GEO_WKT}>'


def commons(name: str) -> str:
    return f"<{COMMONS}{quote(name)}>"


def slug(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isascii() and ch.isalnum())


def uuid_like(qid: str, *parts: object) -> str:
    """A deterministic GUID-shaped id: 26 hex digits shared by the entity's statements and 6
    of the statement's own (real GUIDs are fully random; sharing keeps the file small)."""
    shared = hashlib.md5(qid.encode()).hexdigest().upper()
    own = hashlib.md5("|".join(str(p) for p in (qid, *parts)).encode()).hexdigest().upper()
    return f"{shared[:8]}-{shared[8:12]}-{shared[12:16]}-{shared[16:20]}-{shared[20:26]}{own[:6]}"


class World:
    """Everything generated so far, with the random generator and the pools."""

    def __init__(self) -> None:
        self.rng = np.random.default_rng(SEED)
        self.entities: list[Entity] = []
        self.by_qid: dict[str, Entity] = {}
        self.pools: dict[str, list[Entity]] = {}
        self.next_qid = FIRST_SYNTHETIC_QID
        self.used_names: set[str] = set()
        self.categories = json.loads(CATEGORIES_JSON.read_text(encoding="utf-8"))["categories"]
        self.class_of = {c["name"]: c["class_qid"] for c in self.categories}
        self.subclass_qids: dict[tuple[str, str], str] = {}
        self.architects: list[Entity] = []
        self._buffer: list[float] = []
        self._next = 0
        self.team_by_sport: dict[str, list[Entity]] = {}

    # random helpers: uniform draws come from a buffer (per-call numpy draws are slow)
    def random(self) -> float:
        if self._next >= len(self._buffer):
            self._buffer = self.rng.random(1 << 16).tolist()
            self._next = 0
        self._next += 1
        return self._buffer[self._next - 1]

    def randint(self, low: int, high: int) -> int:
        """A uniform integer in [low, high)."""
        return low + int(self.random() * (high - low))

    def uniform(self, low: float, high: float) -> float:
        return low + self.random() * (high - low)

    def pick(self, seq: list[Any]) -> Any:
        return seq[int(self.random() * len(seq))]

    def chance(self, p: float) -> bool:
        return self.random() < p

    def unique(self, make: Callable[[], str]) -> str:
        for _ in range(60):
            name = make()
            if name not in self.used_names:
                self.used_names.add(name)
                return name
        base = make()
        n = 2
        while f"{base} {n}" in self.used_names:
            n += 1
        self.used_names.add(f"{base} {n}")
        return f"{base} {n}"

    def place_name(self) -> str:
        return self.unique(
            lambda: (self.pick(PLACE_A) + self.pick(PLACE_B) + self.pick(PLACE_C)).capitalize()
        )

    def person_name(self) -> str:
        return self.unique(lambda: f"{self.pick(GIVEN)} {self.pick(FAM_A)}{self.pick(FAM_B)}")

    def brand(self) -> str:
        return self.pick(BRAND_A) + self.pick(BRAND_B)

    def new(
        self,
        category: str | None,
        labels: tuple[str, str, str],
        descriptions: tuple[str, str, str],
        qid: str | None = None,
    ) -> Entity:
        if qid is None:
            qid = f"Q{self.next_qid}"
            self.next_qid += 1
        entity = Entity(
            qid,
            category,
            dict(zip(LANGS, labels, strict=True)),
            {lang: "[demo] " + d for lang, d in zip(LANGS, descriptions, strict=True)},
        )
        self.entities.append(entity)
        self.by_qid[qid] = entity
        if category:
            self.pools.setdefault(category, []).append(entity)
        return entity


# --- pass 1: entities ----------------------------------------------------------------------
def make_schema_items(w: World) -> None:
    for qid, labels in CLASS_LABELS.items():
        e = w.new(
            None, labels, ("class of entities", "classe di entità", "clase de entidades"), qid=qid
        )
        e.fixed_popularity = True
    for category, subs in SUBCLASSES.items():
        parent = w.class_of[category]
        for labels, _share in subs:
            e = w.new(None, labels, ("class of entities", "classe di entità", "clase de entidades"))
            e.members.append(("P279", parent))
            e.fixed_popularity = True
            w.subclass_qids[(category, labels[0])] = e.qid
    for kind, rows in VALUE_ITEMS.items():
        desc = VALUE_KIND_DESC[kind]
        for labels in rows:
            e = w.new(f"value:{kind}", labels, desc)
            e.fixed_popularity = True


def choose_subclass(w: World, category: str) -> tuple[str, tuple[str, str, str] | None]:
    """The class an entity is typed with: a subclass (by share) or the category class."""
    r = w.random()
    for labels, share in SUBCLASSES.get(category, []):
        if r < share:
            return w.subclass_qids[(category, labels[0])], labels
        r -= share
    return w.class_of[category], None


def make_countries(w: World) -> None:
    for _ in range(20):
        name = w.unique(
            lambda: (w.pick(PLACE_A) + w.pick(PLACE_B)).capitalize() + w.pick(COUNTRY_C)
        )
        e = w.new(
            "Country", (name, name, name), ("sovereign state", "stato sovrano", "estado soberano")
        )
        e.members.append(("P31", "Q6256"))
        e.ctx["center"] = (w.uniform(-120, 140), w.uniform(-40, 60))
        e.ctx["year"] = w.randint(1200, 1990)
        e.fixed_popularity = True
        e.statements = w.randint(150, 900)


def near(w: World, center: tuple[float, float], spread: float) -> tuple[float, float]:
    lon = min(179.9, max(-179.9, center[0] + float(w.rng.normal(0, spread))))
    lat = min(85.0, max(-85.0, center[1] + float(w.rng.normal(0, spread))))
    return lon, lat


def member_entity(
    w: World,
    category: str,
    labels: tuple[str, str, str],
    descriptions: tuple[str, str, str],
    cls: str,
    **ctx: Any,
) -> Entity:
    e = w.new(category, labels, descriptions)
    prop = next(c["membership_property"] for c in w.categories if c["name"] == category)
    if prop == "P106":
        e.members.append(("P31", "Q5"))
    e.members.append((prop, cls))
    e.ctx.update(ctx)
    return e


def make_places(w: World) -> None:
    countries = w.pools["Country"]
    for _ in range(SIZES["City"]):
        country = w.pick(countries)
        name = w.place_name()
        cls, _sub = choose_subclass(w, "City")
        c = country.labels["en"]
        member_entity(
            w,
            "City",
            (name, name, name),
            (f"city in {c}", f"città di {c}", f"ciudad de {c}"),
            cls,
            country=country,
            coord=near(w, country.ctx["center"], 3.0),
            year=w.randint(300, 1950),
        )
    for country in countries:  # the first city of each country is its capital
        capital = next(x for x in w.pools["City"] if x.ctx["country"] is country)
        country.ctx["capital"] = capital
        capital.ctx["capital_of"] = country
    for _ in range(SIZES["River"]):
        country = w.pick(countries)
        stem = w.unique(lambda: w.pick(RIVER_A) + w.pick(RIVER_M) + w.pick(RIVER_B))
        c = country.labels["en"]
        member_entity(
            w,
            "River",
            (f"{stem} River", stem, f"río {stem}"),
            (f"river in {c}", f"fiume di {c}", f"río de {c}"),
            w.class_of["River"],
            country=country,
            coord=near(w, country.ctx["center"], 4.0),
        )
    for _ in range(SIZES["Mountain"]):
        country = w.pick(countries)
        cls, sub = choose_subclass(w, "Mountain")
        x = w.place_name()
        style = int(w.rng.integers(4))
        labels = [
            (f"Mount {x}", f"Monte {x}", f"Monte {x}"),
            (f"{x} Peak", f"Picco {x}", f"Pico {x}"),
            (f"Piz {x}", f"Piz {x}", f"Piz {x}"),
            (f"{x} Horn", f"Corno {x}", f"Cuerno {x}"),
        ][style]
        if sub:
            labels = (f"{x} Volcano", f"Vulcano {x}", f"Volcán {x}")
        c = country.labels["en"]
        kind = sub or ("mountain", "montagna", "montaña")
        member_entity(
            w,
            "Mountain",
            labels,
            (f"{kind[0]} in {c}", f"{kind[1]} di {c}", f"{kind[2]} de {c}"),
            cls,
            country=country,
            coord=near(w, country.ctx["center"], 4.0),
            elevation=w.uniform(300, 6500),
        )


def in_city(w: World, pool: str = "City") -> Entity:
    return w.pick(w.pools[pool])


def make_institutions(w: World) -> None:
    for _ in range(SIZES["University"]):
        city = in_city(w)
        cls, sub = choose_subclass(w, "University")
        x = city.labels["en"]
        if sub and sub[0] == "technical university":
            labels = (
                f"{x} Institute of Technology",
                f"Politecnico di {x}",
                f"Instituto Tecnológico de {x}",
            )
        elif w.chance(0.7):
            labels = (f"University of {x}", f"Università di {x}", f"Universidad de {x}")
        else:
            n = w.person_name()
            labels = (f"{n} University", f"Università {n}", f"Universidad {n}")
        if labels[0] in w.used_names:
            ordinal = w.pick(["Second", "New", "Free", "Catholic", "Open"])
            labels = (
                f"{ordinal} {labels[0]}",
                labels[1] + f" ({ordinal})",
                labels[2] + f" ({ordinal})",
            )
        w.used_names.add(labels[0])
        member_entity(
            w,
            "University",
            labels,
            (f"university in {x}", f"università a {x}", f"universidad en {x}"),
            cls,
            city=city,
            country=city.ctx["country"],
            year=w.randint(1100, 2010),
        )
    industries = w.pools["value:industry"]
    for _ in range(SIZES["Company"]):
        city = in_city(w)
        industry = w.pick(industries)
        name = w.unique(lambda: f"{w.brand()} {w.pick(BRAND_SUFFIX)}")
        cls, _sub = choose_subclass(w, "Company")
        i = industry.labels
        x = city.labels["en"]
        member_entity(
            w,
            "Company",
            (name, name, name),
            (
                f"{i['en']} company based in {x}",
                f"azienda con sede a {x} ({i['it']})",
                f"empresa con sede en {x} ({i['es']})",
            ),
            cls,
            city=city,
            country=city.ctx["country"],
            industry=industry,
            year=w.randint(1820, 2022),
        )
    styles = w.pools["value:architectural style"]
    for _ in range(SIZES["Building"]):
        city = in_city(w)
        cls, sub = choose_subclass(w, "Building")
        x = city.labels["en"]
        kind = sub[0] if sub else ""
        n = w.pick(FAM_A) + w.pick(FAM_B)
        labels = {
            "museum building": (f"{n} Museum", f"Museo {n}", f"Museo {n}"),
            "church building": (
                f"Church of Saint {w.pick(GIVEN)}, {x}",
                f"Chiesa di San {w.pick(GIVEN)} ({x})",
                f"Iglesia de San {w.pick(GIVEN)} ({x})",
            ),
            "skyscraper": (f"{w.brand()} Tower", f"Torre {w.brand()}", f"Torre {w.brand()}"),
            "castle": (f"{n} Castle", f"Castello di {n}", f"Castillo de {n}"),
            "stadium": (
                f"{x} {w.pick(['Arena', 'Stadium', 'Park'])}",
                f"Stadio di {x}",
                f"Estadio de {x}",
            ),
        }.get(kind, (f"{n} Palace", f"Palazzo {n}", f"Palacio {n}"))
        k = sub or ("building", "edificio", "edificio")
        member_entity(
            w,
            "Building",
            labels,
            (f"{k[0]} in {x}", f"{k[1]} a {x}", f"{k[2]} en {x}"),
            cls,
            city=city,
            country=city.ctx["country"],
            kind=kind,
            style=w.pick(styles),
            year=w.randint(1100, 2020),
            coord=near(w, city.ctx["coord"], 0.05),
        )
    sports = w.pools["value:sport"]
    leagues: dict[tuple[str, str], Entity] = {}
    for _ in range(SIZES["SportsTeam"]):
        city = in_city(w)
        cls, sub = choose_subclass(w, "SportsTeam")
        sport = sports[SPORT_OF_SUBCLASS[sub[0]]] if sub else w.pick(sports[2:])
        country = city.ctx["country"]
        key = (country.qid, sport.qid)
        if key not in leagues:
            s, c = sport.labels, country.labels["en"]
            leagues[key] = w.new(
                "value:league",
                (
                    f"{c} {s['en'].title()} League",
                    f"Lega di {s['it']} di {c}",
                    f"Liga de {s['es']} de {c}",
                ),
                VALUE_KIND_DESC["league"],
            )
            leagues[key].ctx.update(country=country, sport=sport)
        x = city.labels["en"]
        name = w.unique(
            lambda x=x: w.pick(
                [
                    f"FC {x}",
                    f"{x} Rovers",
                    f"{x} Giants",
                    f"Atlético {x}",
                    f"Real {x}",
                    f"{x} Wanderers",
                    f"Sporting {x}",
                    f"{x} United",
                    f"{x} Comets",
                ]
            )
        )
        s = sport.labels
        member_entity(
            w,
            "SportsTeam",
            (name, name, name),
            (
                f"{s['en']} club from {x}",
                f"squadra di {s['it']} di {x}",
                f"equipo de {s['es']} de {x}",
            ),
            cls,
            city=city,
            country=country,
            sport=sport,
            league=leagues[key],
            year=w.randint(1860, 2015),
        )


OCCUPATION_DEFAULT = {
    "Artist": ("artist", "artista", "artista"),
    "Astronaut": ("astronaut", "astronauta", "astronauta"),
    "Athlete": ("athlete", "atleta", "atleta"),
    "Model": ("model", "modello", "modelo"),
    "Politician": ("politician", "politico", "político"),
}


def make_people(w: World) -> None:
    for category in ("Artist", "Astronaut", "Athlete", "Model", "Politician"):
        for _ in range(SIZES[category]):
            city = in_city(w)
            country = city.ctx["country"] if w.chance(0.85) else w.pick(w.pools["Country"])
            cls, sub = choose_subclass(w, category)
            occ = sub or OCCUPATION_DEFAULT[category]
            low = {"Astronaut": 1925, "Model": 1940, "Athlete": 1930}.get(category, 1750)
            born = w.randint(low, 2004)
            died = None
            if born < 1935 or (born < 1960 and w.chance(0.3)):
                died = min(2024, born + w.randint(35, 95))
            life = (
                (f"({born}–{died})", f"({born}–{died})", f"({born}–{died})")
                if died
                else (f"(born {born})", f"(n. {born})", f"(n. {born})")
            )
            c = country.labels["en"]
            name = w.person_name()
            e = member_entity(
                w,
                category,
                (name, name, name),
                (
                    f"{occ[0]} from {c} {life[0]}",
                    f"{occ[1]} di {c} {life[1]}",
                    f"{occ[2]} de {c} {life[2]}",
                ),
                cls,
                city=city,
                country=country,
                born=born,
                died=died,
                kind=occ[0],
            )
            if category == "Athlete":
                index = SPORT_OF_SUBCLASS.get(occ[0])
                sports = w.pools["value:sport"]
                e.ctx["sport"] = sports[index] if index is not None else w.pick(sports)
            if category == "Astronaut" and w.chance(0.12):  # some astronauts turned politician
                e.members.append(("P106", w.class_of["Politician"]))
                e.ctx["also_politician"] = True


def make_works(w: World) -> None:
    artists = w.pools["Artist"]
    painters = [a for a in artists if a.ctx["kind"] == "painter"]
    sculptors = [a for a in artists if a.ctx["kind"] in ("sculptor", "artist")]
    museums = [b for b in w.pools["Building"] if b.ctx["kind"] == "museum building"]
    genres = w.pools["value:painting genre"]
    for _ in range(SIZES["Painting"]):
        creator = w.pick(painters)
        genre = w.pick(genres)
        g = genre.labels["en"]
        if g == "portrait":
            n = w.person_name() if w.chance(0.5) else w.pick(GIVEN)
            labels = (f"Portrait of {n}", f"Ritratto di {n}", f"Retrato de {n}")
        elif g == "landscape art":
            x = w.pick(w.pools["City"]).labels["en"]
            labels = (f"View of {x}", f"Veduta di {x}", f"Vista de {x}")
        elif g == "still life":
            f = w.pick(FRUITS)
            labels = (f"Still Life with {f[0]}", f"Natura morta con {f[1]}", f"Bodegón con {f[2]}")
        elif g == "abstract art":
            n = w.randint(1, 40)
            labels = (f"Composition No. {n}", f"Composizione n. {n}", f"Composición n.º {n}")
        elif g == "marine art":
            x = w.pick(w.pools["City"]).labels["en"]
            labels = (f"The Harbour at {x}", f"Il porto di {x}", f"El puerto de {x}")
        else:
            adj = w.pick(WORK_ADJ)
            noun = w.pick(WORK_NOUN)
            labels = (f"The {adj} {noun}",) * 3
        a = creator.labels["en"]
        born = creator.ctx["born"]
        member_entity(
            w,
            "Painting",
            labels,
            (f"painting by {a}", f"dipinto di {a}", f"pintura de {a}"),
            w.class_of["Painting"],
            creator=creator,
            genre=genre,
            location=w.pick(museums),
            year=born + w.randint(18, 60),
        )
    authors = [p for p in w.pools["Politician"][:400]] + artists[:800]
    lit_genres = w.pools["value:literary genre"]
    for _ in range(SIZES["WrittenWork"]):
        author = w.pick(authors)
        genre = w.pick(lit_genres)
        cls, _sub = choose_subclass(w, "WrittenWork")
        style = int(w.rng.integers(4))
        adj, noun, place = w.pick(WORK_ADJ), w.pick(WORK_NOUN), w.pick(w.pools["City"])
        title = [
            f"The {adj} {noun}",
            f"{noun} of {place.labels['en']}",
            f"{adj} {noun}",
            f"A {noun} in {place.labels['en']}",
        ][style]
        g, a = genre.labels, author.labels["en"]
        member_entity(
            w,
            "WrittenWork",
            (title, title, title),
            (f"{g['en']} by {a}", f"{g['it']} di {a}", f"{g['es']} de {a}"),
            cls,
            author=author,
            genre=genre,
            country=author.ctx["country"],
            year=author.ctx["born"] + w.randint(20, 70),
        )
    works = w.pools["WrittenWork"]
    for _ in range(SIZES["ComicsCharacter"]):
        creator = w.pick(sculptors)
        cls, _sub = choose_subclass(w, "ComicsCharacter")
        name = w.unique(
            lambda: w.pick(
                [
                    f"{w.pick(HERO_A)} {w.pick(HERO_B)}",
                    f"The {w.pick(HERO_B)}",
                    f"{w.pick(HERO_B)}{w.pick(['man', 'woman', 'girl'])}",
                    w.person_name(),
                ]
            )
        )
        a = creator.labels["en"]
        member_entity(
            w,
            "ComicsCharacter",
            (name, name, name),
            (
                f"comics character created by {a}",
                f"personaggio dei fumetti creato da {a}",
                f"personaje de historieta creado por {a}",
            ),
            cls,
            creator=creator,
            work=w.pick(works),
            country=creator.ctx["country"],
            year=max(1900, creator.ctx["born"] + w.randint(18, 50)),
        )


def make_things(w: World) -> None:
    for _ in range(SIZES["Street"]):
        city = in_city(w)
        cls, sub = choose_subclass(w, "Street")
        honoree = w.pick(w.pools["Politician"]) if w.chance(0.5) else None
        n = honoree.labels["en"] if honoree else w.pick(w.pools["City"]).labels["en"]
        if sub:
            labels = (f"{n} Avenue", f"Viale {n}", f"Avenida {n}")
        else:
            labels = (f"{n} Street", f"Via {n}", f"Calle {n}")
        x = city.labels["en"]
        k = sub or ("street", "strada", "calle")
        member_entity(
            w,
            "Street",
            labels,
            (f"{k[0]} in {x}", f"{k[1]} a {x}", f"{k[2]} en {x}"),
            cls,
            city=city,
            country=city.ctx["country"],
            honoree=honoree,
            coord=near(w, city.ctx["coord"], 0.05),
        )
    sculptors = [a for a in w.pools["Artist"] if a.ctx["kind"] == "sculptor"]
    for _ in range(SIZES["Monument"]):
        city = in_city(w)
        cls, sub = choose_subclass(w, "Monument")
        x = city.labels["en"]
        if sub and sub[0] == "statue":
            n = w.pick(w.pools["Politician"]).labels["en"]
            labels = (f"Statue of {n}", f"Statua di {n}", f"Estatua de {n}")
        elif sub:
            labels = (
                f"{x} War Memorial",
                f"Memoriale di guerra di {x}",
                f"Memorial de guerra de {x}",
            )
        else:
            n = w.pick(WORK_ADJ)
            labels = (
                f"Monument to the {n} Years",
                f"Monumento agli anni {n.lower()}",
                f"Monumento a los años {n.lower()}",
            )
        k = sub or ("monument", "monumento", "monumento")
        member_entity(
            w,
            "Monument",
            labels,
            (f"{k[0]} in {x}", f"{k[1]} a {x}", f"{k[2]} en {x}"),
            cls,
            city=city,
            country=city.ctx["country"],
            creator=w.pick(sculptors),
            year=w.randint(1500, 2020),
            coord=near(w, city.ctx["coord"], 0.03),
        )
    airport_cities = w.pools["City"][: SIZES["Airport"] * 2]
    chosen = w.rng.choice(len(airport_cities), size=SIZES["Airport"], replace=False)
    for index in sorted(int(i) for i in chosen):
        city = airport_cities[index]
        cls, sub = choose_subclass(w, "Airport")
        x = city.labels["en"]
        labels = (
            (
                f"{x} International Airport",
                f"Aeroporto Internazionale di {x}",
                f"Aeropuerto Internacional de {x}",
            )
            if sub
            else (f"{x} Airport", f"Aeroporto di {x}", f"Aeropuerto de {x}")
        )
        member_entity(
            w,
            "Airport",
            labels,
            (f"airport serving {x}", f"aeroporto di {x}", f"aeropuerto de {x}"),
            cls,
            city=city,
            country=city.ctx["country"],
            year=w.randint(1920, 2015),
            coord=near(w, city.ctx["coord"], 0.1),
        )
    for _ in range(SIZES["Food"]):
        country = w.pick(w.pools["Country"])
        cls, sub = choose_subclass(w, "Food")
        x = w.pick(w.pools["City"]).labels["en"]
        kind = sub[0] if sub else ""
        labels = {
            "dish": (f"{x} stew", f"stufato di {x}", f"guiso de {x}"),
            "cheese": (f"{x} cheese", f"formaggio di {x}", f"queso de {x}"),
            "dessert": (f"{x} tart", f"torta di {x}", f"tarta de {x}"),
        }.get(kind, (f"{x} bread", f"pane di {x}", f"pan de {x}"))
        if labels[0] in w.used_names:
            labels = tuple(f"{lab} ({country.labels['en']})" for lab in labels)  # type: ignore
        w.used_names.add(labels[0])
        k = sub or ("food", "alimento", "alimento")
        c = country.labels["en"]
        member_entity(
            w,
            "Food",
            labels,
            (f"{k[0]} from {c}", f"{k[1]} tipico di {c}", f"{k[2]} típico de {c}"),
            cls,
            country=country,
            year=w.randint(1200, 2000),
        )
    makers = w.pools["Company"]
    for _ in range(SIZES["MeanOfTransportation"]):
        maker = w.pick(makers)
        cls, sub = choose_subclass(w, "MeanOfTransportation")
        brand = maker.labels["en"].split()[0]
        name = w.unique(lambda b=brand: f"{b} {w.pick(VEHICLE_NAMES)} {w.randint(1, 10) * 100}")
        k = sub or ("locomotive class", "classe di locomotive", "serie de locomotoras")
        m = maker.labels["en"]
        member_entity(
            w,
            "MeanOfTransportation",
            (name, name, name),
            (f"{k[0]} made by {m}", f"{k[1]} prodotto da {m}", f"{k[2]} fabricado por {m}"),
            cls,
            maker=maker,
            country=maker.ctx["country"],
            year=w.randint(1900, 2024),
        )


def make_nature(w: World) -> None:
    ranks = {e.labels["en"]: e for e in w.pools["value:taxon rank"]}
    n = SIZES["Taxon"]
    levels = [("order", n // 100), ("family", n // 20), ("genus", n // 5)]
    levels.append(("species", n - sum(k for _, k in levels)))
    parents: list[Entity] = []
    for rank, count in levels:
        current: list[Entity] = []
        for _ in range(count):
            parent = w.pick(parents) if parents else None
            stem = w.unique(lambda: w.pick(GENUS_A) + w.pick(GENUS_M))
            if rank == "order":
                name = stem + "ales"
            elif rank == "family":
                name = stem + "idae"
            elif rank == "genus":
                name = stem + w.pick(GENUS_B)
            else:
                assert parent is not None
                w.used_names.discard(stem)
                name = w.unique(lambda p=parent: f"{p.labels['en']} {w.pick(EPITHETS)}")
            r = ranks[rank].labels
            if parent is None:
                desc = (
                    f"{r['en']} of organisms",
                    f"{r['it']} di organismi",
                    f"{r['es']} de organismos",
                )
            else:
                pr, p = ranks[parent.ctx["rank"]].labels, parent.labels["en"]
                desc = (
                    f"{r['en']} in the {pr['en']} {p}",
                    f"{r['it']} del {pr['it']} {p}",
                    f"{r['es']} del {pr['es']} {p}",
                )
            e = member_entity(
                w,
                "Taxon",
                (name, name, name),
                desc,
                w.class_of["Taxon"],
                rank=rank,
                parent=parent,
                rank_item=ranks[rank],
            )
            current.append(e)
        parents = current
    for _ in range(SIZES["ChemicalCompound"]):
        cls, _sub = choose_subclass(w, "ChemicalCompound")
        name = w.unique(
            lambda: (
                (f"{w.randint(1, 7)}-" if w.chance(0.4) else "")
                + w.pick(CHEM_PRE)
                + w.pick(CHEM_STEM)
                + w.pick(CHEM_SUF)
            )
        )
        member_entity(
            w,
            "ChemicalCompound",
            (name, name, name),
            ("chemical compound", "composto chimico", "compuesto químico"),
            cls,
            year=w.randint(1800, 2020),
        )
    stars: list[Entity] = []
    planets: list[Entity] = []
    for _ in range(SIZES["CelestialBody"]):
        cls, sub = choose_subclass(w, "CelestialBody")
        kind = sub[0] if sub else "astronomical object"
        x = w.place_name()
        parent = None
        if kind == "asteroid":
            name = f"{w.randint(1000, 600000)} {x}"
        elif kind == "star":
            name = f"{x} {w.pick(['Majoris', 'Minoris', 'Australis', 'Borealis'])}"
        elif kind == "planet" and stars:
            parent = w.pick(stars)
            name = f"{parent.labels['en']} {w.pick(['b', 'c', 'd', 'e'])}"
        elif kind == "natural satellite" and planets:
            parent = w.pick(planets)
            name = f"{x} ({parent.labels['en']})"
        else:
            name = f"HD {w.randint(1000, 300000)}"
        k = sub or ("astronomical object", "oggetto astronomico", "objeto astronómico")
        e = member_entity(
            w,
            "CelestialBody",
            (name, name, name),
            k,
            cls,
            parent=parent,
            kind=kind,
            year=w.randint(1780, 2023),
        )
        if kind == "star":
            stars.append(e)
        elif kind == "planet":
            planets.append(e)


# --- pass 2: statements --------------------------------------------------------------------
Template = tuple[str, float, Callable[[World, Entity], list[str] | str | None]]


def ref(key: str) -> Callable[[World, Entity], str | None]:
    def value(_w: World, e: Entity) -> str | None:
        target = e.ctx.get(key)
        return item(target.qid) if target is not None else None

    return value


def from_pool(pool: str) -> Callable[[World, Entity], str]:
    return lambda w, _e: item(w.pick(w.pools[pool]).qid)


def year_of(key: str = "year", day: bool = False) -> Callable[[World, Entity], str | None]:
    def value(w: World, e: Entity) -> str | None:
        year = e.ctx.get(key)
        if year is None:
            return None
        if day:
            return time_value(year, w.randint(1, 13), w.randint(1, 29))
        return time_value(year)

    return value


def image(w: World, e: Entity) -> str:
    return commons(
        f"{e.labels['en']} {w.pick(['', '01', '2014', 'view', 'photo'])}".strip().replace(",", "")
        + ".jpg"
    )


def website(_w: World, e: Entity) -> str:
    return f"<https://www.{slug(e.labels['en'])[:40]}.example/>"


def coord(w: World, e: Entity) -> str:
    lon, lat = e.ctx.get("coord") or near(w, e.ctx["country"].ctx["center"], 4.0)
    return coordinate(lon, lat)


def official_name(w: World, e: Entity) -> list[str]:
    names = [lit(e.labels["en"], "en")]
    lang = w.pick(["it", "es"])
    if lang in e.labels and e.labels[lang] != e.labels["en"] and w.chance(0.5):
        names.append(lit(e.labels[lang], lang))
    return names


def population(w: World, e: Entity) -> list[str] | str:
    pop = float(w.rng.lognormal(10.5, 1.3))
    if w.chance(0.3):  # an older census (normal rank) and the current one (preferred)
        return [quantity(pop * w.uniform(0.7, 0.98)), "PREFERRED" + quantity(pop)]
    return quantity(pop)


def qty(low: float, high: float, decimals: int = 0) -> Callable[[World, Entity], str]:
    return lambda w, _e: quantity(w.uniform(low, high), decimals)


def viaf(w: World, _e: Entity) -> str:
    return lit(str(w.randint(10_000_000, 999_999_999)))


def some_value(w: World, e: Entity, pid: str) -> str:
    return f"<{GENID}{hashlib.md5(f'{e.qid}|{pid}|somevalue'.encode()).hexdigest()}>"


def chemical_formula(w: World, _e: Entity) -> str:
    parts = [f"C{w.randint(1, 30)}", f"H{w.randint(1, 50)}"]
    for element in ("N", "O", "Cl", "S"):
        if w.chance(0.4):
            k = w.randint(1, 6)
            parts.append(element if k == 1 else f"{element}{k}")
    digits = "₀₁₂₃₄₅₆₇₈₉"
    return lit("".join(ch if not ch.isdigit() else digits[int(ch)] for ch in "".join(parts)))


def cas(w: World, _e: Entity) -> str:
    return lit(f"{w.randint(50, 99999)}-{w.randint(10, 99)}-{w.randint(0, 10)}")


def team_for(w: World, e: Entity) -> str | None:
    sport = e.ctx.get("sport")
    teams = w.team_by_sport.get(sport.qid, []) if sport else []
    return item(w.pick(teams).qid) if teams else None


PERSON: list[Template] = [
    ("P569", 1.0, year_of("born", day=True)),
    ("P27", 0.95, ref("country")),
    ("P19", 0.85, ref("city")),
    ("P570", 1.0, year_of("died", day=True)),
    ("P69", 0.5, from_pool("University")),
    ("P18", 0.4, image),
    ("P214", 0.5, viaf),
]
TEMPLATES: dict[str, list[Template]] = {
    "Country": [
        ("P36", 1.0, ref("capital")),
        ("P1082", 1.0, population),
        ("P571", 1.0, year_of()),
        ("P625", 1.0, lambda w, e: coordinate(*e.ctx["center"])),
        ("P1448", 1.0, official_name),
        ("P856", 1.0, website),
        ("P18", 1.0, image),
    ],
    "City": [
        ("P17", 1.0, ref("country")),
        ("P1376", 1.0, ref("capital_of")),
        ("P1082", 0.95, population),
        ("P625", 0.95, coord),
        ("P571", 0.5, year_of()),
        ("P2044", 0.5, qty(0, 2500)),
        ("P18", 0.5, image),
        ("P856", 0.4, website),
        ("P1448", 0.3, official_name),
    ],
    "River": [
        ("P17", 1.0, ref("country")),
        ("P403", 0.85, lambda w, e: e.ctx.get("mouth")),
        ("P885", 0.5, from_pool("Mountain")),
        ("P2043", 0.7, qty(8, 3200, 1)),
        ("P625", 0.7, coord),
        ("P18", 0.3, image),
    ],
    "Mountain": [
        ("P17", 1.0, ref("country")),
        ("P2044", 1.0, lambda w, e: quantity(e.ctx["elevation"])),
        ("P625", 0.9, coord),
        ("P18", 0.4, image),
    ],
    "Street": [
        ("P17", 1.0, ref("country")),
        ("P131", 1.0, ref("city")),
        ("P138", 1.0, ref("honoree")),
        ("P2043", 0.4, qty(0.1, 12, 2)),
        ("P625", 0.7, coord),
    ],
    "Building": [
        ("P17", 1.0, ref("country")),
        ("P131", 1.0, ref("city")),
        ("P84", 0.6, lambda w, e: item(w.pick(w.architects).qid)),
        ("P149", 0.6, ref("style")),
        ("P571", 0.7, year_of()),
        ("P625", 0.8, coord),
        ("P18", 0.4, image),
    ],
    "Monument": [
        ("P17", 1.0, ref("country")),
        ("P131", 1.0, ref("city")),
        ("P170", 0.6, ref("creator")),
        ("P571", 0.7, year_of()),
        ("P625", 0.8, coord),
        ("P18", 0.4, image),
    ],
    "Airport": [
        ("P17", 1.0, ref("country")),
        ("P131", 1.0, ref("city")),
        ("P571", 0.7, year_of()),
        ("P625", 0.9, coord),
        ("P2044", 0.6, qty(0, 1800)),
        ("P856", 0.5, website),
    ],
    "University": [
        ("P17", 1.0, ref("country")),
        ("P131", 1.0, ref("city")),
        ("P571", 0.9, year_of()),
        ("P856", 0.7, website),
        ("P625", 0.6, coord),
        ("P1448", 0.4, official_name),
        ("P18", 0.3, image),
    ],
    "Company": [
        ("P17", 1.0, ref("country")),
        ("P159", 0.95, ref("city")),
        ("P452", 0.9, ref("industry")),
        ("P571", 0.8, year_of()),
        ("P112", 0.4, from_pool("Politician")),
        ("P856", 0.6, website),
        ("P1128", 0.4, qty(5, 250000)),
        ("P1448", 0.3, official_name),
    ],
    "SportsTeam": [
        ("P641", 1.0, ref("sport")),
        ("P17", 1.0, ref("country")),
        ("P118", 0.9, ref("league")),
        ("P159", 0.7, ref("city")),
        ("P115", 0.4, from_pool("stadium")),
        ("P571", 0.7, year_of()),
        ("P856", 0.5, website),
    ],
    "Artist": PERSON
    + [("P136", 0.3, from_pool("value:painting genre")), ("P108", 0.2, from_pool("University"))],
    "Politician": PERSON + [("P108", 0.3, from_pool("Company"))],
    "Astronaut": PERSON + [("P108", 0.8, from_pool("Company"))],
    "Model": PERSON + [("P2048", 0.6, qty(160, 195))],
    "Athlete": [
        ("P641", 1.0, ref("sport")),
        ("P54", 0.9, team_for),
        ("P413", 0.7, from_pool("value:position")),
    ]
    + PERSON,
    "Painting": [
        ("P170", 1.0, ref("creator")),
        ("P571", 0.9, year_of()),
        ("P136", 0.8, ref("genre")),
        ("P276", 0.7, ref("location")),
        ("P2048", 0.6, qty(20, 300, 1)),
        ("P2049", 0.6, qty(20, 400, 1)),
        ("P18", 0.6, image),
    ],
    "WrittenWork": [
        ("P50", 1.0, ref("author")),
        ("P1476", 0.9, lambda w, e: lit(e.labels["en"], "en")),
        ("P577", 0.8, year_of()),
        ("P136", 0.8, ref("genre")),
        ("P495", 0.7, ref("country")),
    ],
    "ComicsCharacter": [
        ("P170", 0.9, ref("creator")),
        ("P1441", 0.8, ref("work")),
        ("P495", 0.6, ref("country")),
        ("P571", 0.5, year_of()),
    ],
    "Food": [
        ("P495", 0.9, ref("country")),
        ("P186", 0.5, from_pool("Food")),
        ("P18", 0.5, image),
        ("P571", 0.2, year_of()),
    ],
    "MeanOfTransportation": [
        ("P176", 1.0, ref("maker")),
        ("P495", 0.8, ref("country")),
        ("P571", 0.8, year_of()),
        ("P2067", 0.6, qty(800, 90000)),
        ("P18", 0.5, image),
    ],
    "Taxon": [
        ("P171", 1.0, ref("parent")),
        ("P105", 1.0, ref("rank_item")),
        ("P225", 1.0, lambda w, e: lit(e.labels["en"])),
        (
            "P1843",
            0.3,
            lambda w, e: lit(
                w.pick(WORK_ADJ)
                + " "
                + w.pick(["moth", "fern", "beetle", "orchid", "finch", "shrew", "sedge", "snail"]),
                "en",
            ),
        ),
        ("P18", 0.3, image),
    ],
    "ChemicalCompound": [
        ("P274", 1.0, chemical_formula),
        ("P231", 0.8, cas),
        ("P2067", 0.9, qty(30, 900, 3)),
        ("P575", 0.4, year_of()),
        ("P61", 0.2, from_pool("Artist")),
        ("P18", 0.3, image),
    ],
    "CelestialBody": [
        ("P397", 0.9, ref("parent")),
        ("P575", 0.7, year_of()),
        ("P61", 0.5, from_pool("Astronaut")),
        ("P2067", 0.4, qty(1, 9999, 2)),
        ("P2120", 0.5, qty(1, 70000, 1)),
    ],
}
SOMEVALUE_OK = {"P19", "P170", "P50", "P112", "P61", "P84"}


def draw_popularity(w: World) -> None:
    for e in w.entities:
        mandatory = len(e.members)
        if e.fixed_popularity and e.statements == 0:
            e.statements = max(mandatory, w.randint(2, 40))
        elif not e.fixed_popularity:
            mu = STATEMENT_MU.get(e.category or "", 1.5)
            drawn = int(w.rng.lognormal(mu, STATEMENT_SIGMA))
            e.statements = max(mandatory + 1, min(drawn, 1800))
        e.statements = max(e.statements, mandatory)
        # Sitelinks follow statements, with noise; heads are on every wiki.
        expected = math.exp(0.95 * math.log(e.statements) + float(w.rng.normal(-0.6, 0.7)))
        e.sitelinks = max(0, int(expected) - 1)
        wikis: list[str] = []
        if e.sitelinks:
            p_en = min(1.0, 0.55 + 0.08 * e.sitelinks)
            p_other = min(1.0, 0.12 + 0.07 * e.sitelinks)
            for lang, p in zip(LANGS, (p_en, p_other, p_other), strict=True):
                if len(wikis) < e.sitelinks and w.chance(p):
                    wikis.append(lang)
        e.wikis = tuple(wikis)
        # Long-tail entities more often lack it/es labels (never where a page exists).
        p_label = min(1.0, 0.35 + 0.12 * math.log(e.statements))
        for lang in ("it", "es"):
            if lang not in e.wikis and not e.fixed_popularity and not w.chance(p_label):
                del e.labels[lang]
                e.descriptions.pop(lang, None)
        if not e.fixed_popularity and w.chance(min(0.6, 0.05 + 0.05 * math.log(e.statements))):
            e.aliases = make_aliases(e)


def make_aliases(e: Entity) -> dict[str, list[str]]:
    en = e.labels["en"]
    if e.category in OCCUPATION_DEFAULT:
        given, _, family = en.partition(" ")
        return {"en": [f"{given[0]}. {family}"]}
    if e.category == "City":
        out = {"en": [f"City of {en}"]}
        if "it" in e.labels:
            out["it"] = [f"Città di {en}"]
        return out
    if e.category == "Company":
        return {"en": [en.split()[0], f"{en} Inc."]}
    if e.category == "River" and "es" in e.labels:
        return {"en": [en.removesuffix(" River")], "es": [en.removesuffix(" River")]}
    return {"en": [en.upper()]} if len(en) < 12 else {}


def build_statements(w: World, e: Entity) -> list[Statement]:
    out = [Statement(pid, item(value)) for pid, value in e.members]
    templates = TEMPLATES.get(e.category or "", [])
    for pid, probability, make in templates:
        if len(out) >= min(e.statements, CLAIM_CAP):
            break
        if not w.chance(probability):
            continue
        if pid in SOMEVALUE_OK and w.chance(0.015):
            out.append(Statement(pid, some_value(w, e, pid)))
            continue
        produced = make(w, e)
        if produced is None:
            continue
        values = produced if isinstance(produced, list) else [produced]
        for value in values:
            if len(out) >= min(e.statements, CLAIM_CAP):
                break
            rank = "NormalRank"
            if value.startswith("PREFERRED"):
                value, rank = value.removeprefix("PREFERRED"), "PreferredRank"
            elif len(values) == 1:
                r = w.random()
                rank = (
                    "PreferredRank" if r < 0.02 else "DeprecatedRank" if r < 0.03 else "NormalRank"
                )
            out.append(Statement(pid, value, rank))
    return out


# --- output --------------------------------------------------------------------------------
def entity_lines(
    w: World, e: Entity, statements: list[Statement], titles: dict[str, set[str]]
) -> list[str]:
    s = f"<{WD}{e.qid}>"
    lines = [f"{s} <{RDFS}label> {lit(text, lang)} ." for lang, text in e.labels.items()]
    lines += [
        f"{s} <{SCHEMA}description> {lit(text, lang)} ." for lang, text in e.descriptions.items()
    ]
    for lang, aliases in e.aliases.items():
        lines += [f"{s} <{SKOS}altLabel> {lit(text, lang)} ." for text in aliases]
    lines.append(f'{s} <{WIKIBASE}statements> "{e.statements}"^^<{XSD}integer> .')
    lines.append(f'{s} <{WIKIBASE}sitelinks> "{e.sitelinks}"^^<{XSD}integer> .')
    for lang in e.wikis:
        title = e.labels[lang]
        if title in titles[lang]:
            title = f"{title} ({e.descriptions['en'].removeprefix('[demo] ').split(' ')[0]})"
        n = 2
        base = title
        while title in titles[lang]:
            title = f"{base} {n}"
            n += 1
        titles[lang].add(title)
        page = f"<https://{lang}.wikipedia.org/wiki/{quote(title.replace(' ', '_'), safe=':(),')}>"
        lines += [
            f"{page} <{SCHEMA}about> {s} .",
            f"{page} <{SCHEMA}isPartOf> <https://{lang}.wikipedia.org/> .",
            f'{page} <{SCHEMA}inLanguage> "{lang}" .',
        ]
    best: dict[str, str] = {}
    for st in statements:
        if st.rank == "PreferredRank" or (st.rank == "NormalRank" and st.pid not in best):
            best[st.pid] = st.rank
    for index, st in enumerate(statements):
        node = f"<{WDS}{e.qid}-{uuid_like(e.qid, st.pid, index)}>"
        lines += [
            f"{s} <{P_NS}{st.pid}> {node} .",
            f"{node} <{PS}{st.pid}> {st.value} .",
            f"{node} <{WIKIBASE}rank> <{WIKIBASE}{st.rank}> .",
        ]
        if st.pid == "P54" and w.chance(0.5):
            lines.append(f"{node} <{PQ}P580> {time_value(w.randint(1980, 2024))} .")
        if best.get(st.pid) == st.rank:
            lines.append(f"{s} <{WDT}{st.pid}> {st.value} .")
    return lines


def property_lines() -> list[str]:
    lines = []
    for pid, (en, it, es, kind) in PROPERTIES.items():
        s = f"<{WD}{pid}>"
        lines += [
            f"{s} <{RDFS}label> {lit(text, lang)} ."
            for lang, text in zip(LANGS, (en, it, es), strict=True)
        ]
        lines += [
            f"{s} <{SCHEMA}description> {lit(text, lang)} ."
            for lang, text in zip(
                LANGS,
                (
                    "[demo] Wikidata property",
                    "[demo] proprietà di Wikidata",
                    "[demo] propiedad de Wikidata",
                ),
                strict=True,
            )
        ]
        lines += [
            f"{s} <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <{WIKIBASE}Property> .",
            f"{s} <{WIKIBASE}propertyType> <{WIKIBASE}{kind}> .",
            f"{s} <{WIKIBASE}claim> <{P_NS}{pid}> .",
            f"{s} <{WIKIBASE}statementProperty> <{PS}{pid}> .",
            f"{s} <{WIKIBASE}qualifier> <{PQ}{pid}> .",
            f"{s} <{WIKIBASE}directClaim> <{WDT}{pid}> .",
        ]
    return lines


def build_world() -> World:
    w = World()
    make_schema_items(w)
    make_countries(w)
    make_places(w)
    make_institutions(w)
    make_people(w)
    make_works(w)
    make_things(w)
    make_nature(w)
    # Pools used by value generators.
    w.pools["stadium"] = [b for b in w.pools["Building"] if b.ctx["kind"] == "stadium"]
    w.architects = [a for a in w.pools["Artist"] if a.ctx["kind"] == "architect"]
    teams: dict[str, list[Entity]] = {}
    for team in w.pools["SportsTeam"]:
        teams.setdefault(team.ctx["sport"].qid, []).append(team)
    w.team_by_sport = teams
    rivers = w.pools["River"]
    for index, river in enumerate(rivers):  # rivers flow into earlier rivers: a drainage tree
        if index >= 60 and w.chance(0.8):
            river.ctx["mouth"] = item(rivers[int(w.rng.integers(index))].qid)
    draw_popularity(w)
    return w


def build_lines() -> list[str]:
    w = build_world()
    titles: dict[str, set[str]] = {lang: set() for lang in LANGS}
    lines = property_lines()
    for e in w.entities:
        lines += entity_lines(w, e, build_statements(w, e), titles)
    return sorted(set(lines))


def render(lines: list[str]) -> bytes:
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0, compresslevel=6) as gz:
        gz.write(("\n".join(lines) + "\n").encode("utf-8"))
    return buffer.getvalue()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    lines = build_lines()
    data = render(lines)
    args.output.write_bytes(data)
    print(f"wrote {args.output} ({len(data) / 1e6:.2f} MB, {len(lines)} triples)")


if __name__ == "__main__":
    main()
