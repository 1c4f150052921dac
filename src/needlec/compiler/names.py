"""A pool of given names for character slots, drawn from many languages and regions.

Names that occur in a haystack are excluded before drawing (see `LatentHopKind`), so an answer
never appears in the haystack outside its needle.
"""

from __future__ import annotations

BUILTIN_NAMES: tuple[str, ...] = (
    "Abebe", "Adaeze", "Afua", "Aiyana", "Akira", "Alejandro", "Amara", "Anahera", "Anders", "Aroha",
    "Ayasha", "Bashir", "Beatriz", "Bogdan", "Bongani", "Camila", "Chiamaka", "Chidi", "Chloe", "Dagny",
    "Dariusz", "Dmitri", "Dong-hyun", "Ebru", "Efua", "Elif", "Emeka", "Esi", "Farida", "Farzana",
    "Fatou", "Femi", "Gaurav", "Giorgos", "Gulnara", "Haruto", "Hiroshi", "Ifeoma", "Ilse", "Imani",
    "Ingrid", "Iolana", "Itzel", "Jomo", "Jun", "Kaito", "Kalani", "Kamal", "Kavya", "Keanu",
    "Kemal", "Kenji", "Kiri", "Kofi", "Laila", "Lars", "Leilani", "Lucia", "Mahnoor", "Makena",
    "Malak", "Mariko", "Mateo", "Mehmet", "Mei", "Mirela", "Nadia", "Naledi", "Nasrin", "Nikhil",
    "Nkechi", "Noa", "Nuno", "Oksana", "Olumide", "Omar", "Oren", "Paolo", "Priya", "Quilla",
    "Radu", "Rahel", "Ravi", "Renata", "Rohan", "Rustam", "Saanvi", "Sakura", "Santiago", "Selin",
    "Seo-yeon", "Sigrid", "Siosaia", "Sipho", "Sunita", "Tahmina", "Takumi", "Tamar", "Tariq", "Tendai",
    "Thandiwe", "Tomasz", "Tuan", "Uzma", "Valentina", "Vikram", "Wairimu", "Wiremu", "Ximena", "Yael",
    "Yaw", "Yerlan", "Yuki", "Yusuf", "Zainab", "Zanele", "Zeynep", "Zhiwei", "Zofia", "Zuri",
)
