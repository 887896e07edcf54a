"""Name themes: every generated program draws its distinctive names from one theme.

A theme is a small domain (a library, a clinic, a fleet...) with an entity record, a sum type
of statuses, an actor, and file/env/url names for scripts. Themes have pairwise disjoint
vocabularies (:func:`vocabulary`), so holding out whole themes keeps held-out names out of
training (see :mod:`pipeline.mix`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True)
class Variant:
    """One status variant: ``Name`` or ``Name(payload: ptype)`` (ptype ``int`` or ``float``)."""

    name: str
    payload: str | None = None
    ptype: str | None = None

    def decl(self) -> str:
        """Source form in a sum type, e.g. ``Borrowed(days: int)``."""
        return f"{self.name}({self.payload}: {self.ptype})" if self.payload else self.name

    def pattern(self, bind: str | None = None) -> str:
        """Match pattern binding the payload (``Borrowed(days)``) or ``_`` when ``bind == "_"``."""
        if not self.payload:
            return self.name
        return f"{self.name}({bind or self.payload})"


@dataclass(frozen=True)
class Theme:
    """A naming domain.

    Attributes:
        key: short id (also the held-out split unit).
        E: entity type name (``Book``); ``e``/``es``: singular/plural lower (``book``/``books``).
        label, count, amount: the entity's ``str``, ``int`` and ``float`` field names.
        variants: three statuses: nullary, int payload, float payload.
        actor: actor name.
        sample: example label values (string literals).
    """

    key: str
    E: str
    e: str
    es: str
    label: str
    count: str
    amount: str
    variants: tuple[Variant, Variant, Variant]
    actor: str
    sample: tuple[str, str, str]

    @property
    def status(self) -> str:
        """Name of the theme's sum type (``BookStatus``)."""
        return f"{self.E}Status"

    def record_decl(self) -> str:
        """``type Book = { title: str, copies: int, fee: float }``."""
        return f"type {self.E} = {{ {self.label}: str, {self.count}: int, {self.amount}: float }}"

    def status_decl(self) -> str:
        """``type BookStatus = | Shelved | Borrowed(days: int) | Overdue(fine: float)``."""
        return f"type {self.status} = " + " ".join(f"| {v.decl()}" for v in self.variants)


def _t(key: str, E: str, es: str, label: str, count: str, amount: str,
       v0: str, v1: str, p1: str, v2: str, p2: str, actor: str, sample: str) -> Theme:
    first, second, third = sample.split(",")  # exactly three sample labels per theme
    return Theme(key, E, E.lower(), es, label, count, amount,
                 (Variant(v0), Variant(v1, p1, "int"), Variant(v2, p2, "float")),
                 actor, (first, second, third))


THEMES: Final[tuple[Theme, ...]] = (
    _t("library", "Book", "books", "title", "copies", "fee", "Shelved", "Borrowed", "days", "Overdue", "fine", "Librarian", "Dune,Emma,Ulysses"),
    _t("shop", "Purchase", "purchases", "customer", "qty", "total", "Pending", "Shipped", "packages", "Refunded", "refund", "Cashier", "Ana,Bo,Chen"),
    _t("weather", "Reading", "readings", "station", "humidity", "celsius", "Calm", "Windy", "gusts", "Stormy", "rainfall", "Forecaster", "north,harbor,ridge"),
    _t("bank", "Account", "accounts", "owner", "txns", "balance", "Solvent", "Frozen", "holds", "Shuttered", "payout", "Teller", "Ines,Omar,Yuki"),
    _t("garden", "Plant", "plants", "species", "sprouts", "height", "Seedling", "Blooming", "petals", "Wilted", "damage", "Gardener", "fern,rose,basil"),
    _t("fleet", "Truck", "trucks", "plate", "axles", "mileage", "Parked", "Hauling", "loads", "Repairing", "cost", "Dispatcher", "KX12,LM40,TR88"),
    _t("clinic", "Patient", "patients", "ward", "visits", "dosage", "Admitted", "Discharged", "stays", "Critical", "fever", "Nurse", "east,west,icu"),
    _t("school", "Student", "students", "fullname", "grade", "gpa", "Enrolled", "Graduated", "year", "Suspended", "penalty", "Registrar", "Mia,Leo,Zoe"),
    _t("music", "Track", "tracks", "artist", "plays", "rating", "Queued", "Playing", "position", "Shuffled", "elapsed", "Jukebox", "Nina,Miles,Bjork"),
    _t("kitchen", "Recipe", "recipes", "dish", "servings", "calories", "Drafted", "Tested", "trials", "Published", "score", "Chef", "soup,stew,tart"),
    _t("hotel", "Room", "rooms", "suite", "beds", "rate", "Vacant", "Booked", "nights", "Housekeeping", "minutes", "Concierge", "A1,B2,C3"),
    _t("airport", "Flight", "flights", "gate", "seats", "fare", "Boarding", "Delayed", "delay", "Landed", "duration", "Controller", "G4,G9,H2"),
    _t("zoo", "Animal", "animals", "habitat", "meals", "weight", "Napping", "Feeding", "portions", "Sick", "temperature", "Keeper", "savanna,reef,jungle"),
    _t("cinema", "Movie", "movies", "director", "screenings", "runtime", "Premiering", "SoldOut", "waitlist", "Archived", "revenue", "Projectionist", "Varda,Ozu,Lean"),
    _t("gym", "Athlete", "athletes", "sport", "workouts", "pace", "Resting", "Training", "reps", "Injured", "recovery", "Coach", "rowing,judo,fencing"),
    _t("farm", "Crop", "crops", "plot", "bushels", "acreage", "Planted", "Growing", "weeks", "Harvested", "tonnage", "Farmer", "wheat,corn,oats"),
    _t("warehouse", "Parcel", "parcels", "barcode", "units", "volume", "Stored", "Packed", "boxes", "Damaged", "loss", "Stocker", "P100,P200,P300"),
    _t("museum", "Exhibit", "exhibits", "gallery", "visitors", "valuation", "Displayed", "OnTour", "cities", "Restoring", "budget", "Curator", "hall,annex,wing"),
    _t("game", "Player", "players", "nickname", "score", "health", "Alive", "Respawning", "ticks", "Defeated", "bonus", "Referee", "neo,ash,kai"),
    _t("parking", "Car", "cars", "license", "hours", "charge", "Arriving", "Stationed", "level", "Departed", "paid", "Attendant", "AB1,CD2,EF3"),
    _t("helpdesk", "Ticket", "tickets", "subject", "replies", "urgency", "Unassigned", "Escalated", "tier", "Resolved", "effort", "Helpdesk", "login,billing,crash"),
    _t("energy", "Meter", "meters", "address", "spikes", "kwh", "Idle", "Metering", "samples", "Faulty", "drift", "Substation", "elm st,oak ave,main st"),
    _t("port", "Vessel", "vessels", "captain", "containers", "draft", "Anchored", "Sailing", "knots", "Docked", "tariff", "Harbormaster", "Ahab,Nemo,Haddock"),
    _t("bakery", "Loaf", "loaves", "flavor", "batches", "price", "Rising", "Baking", "oven_minutes", "Boxed", "takings", "Baker", "rye,spelt,sourdough"),
    _t("transit", "Train", "trains", "route", "stops", "speed", "OnTime", "Tardy", "late_minutes", "Cancelled", "compensation", "Conductor", "red,blue,green"),
    _t("hiring", "Candidate", "candidates", "position_name", "interviews", "salary", "Applied", "Interviewing", "rounds", "Hired", "offer", "Recruiter", "Ravi,Sara,Tom"),
    _t("election", "Ballot", "ballots", "district", "votes", "turnout", "Canvassing", "Certified", "recounts", "Disputed", "margin", "Clerk", "north,south,central"),
    _t("astronomy", "Star", "stars", "constellation", "planets", "magnitude", "Shining", "Eclipsed", "eclipse_hours", "Supernova", "brightness", "Observatory", "Vega,Rigel,Deneb"),
    _t("vet", "Pet", "pets", "breed", "vaccines", "kilos", "Healthy", "Recovering", "recovery_days", "Quarantined", "vet_bill", "Veterinarian", "collie,tabby,pug"),
    _t("events", "Concert", "concerts", "venue", "attendees", "deposit", "Announced", "OnSale", "remaining", "Postponed", "rebooking", "Promoter", "arena,club,park"),
    _t("devops", "Deploy", "deploys", "service", "replicas", "latency", "Queueing", "RollingOut", "pods", "RolledBack", "error_rate", "Deployer", "api,web,worker"),
    _t("pharmacy", "Prescription", "prescriptions", "drug", "refills", "dose", "Filled", "Refilling", "refills_left", "Expired", "waste", "Pharmacist", "aspirin,insulin,statin"),
    _t("courses", "Lesson", "lessons", "topic", "quizzes", "progress", "Locked", "Unlocked", "attempts", "Mastered", "accuracy", "Tutor", "algebra,poetry,chemistry"),
    _t("sensors", "Sensor", "sensors", "location", "alerts", "voltage", "Online", "Offline", "retries", "Degraded", "noise", "Watchdog", "roof,basement,lab"),
    _t("restaurant", "Reservation", "reservations", "guest", "party", "prepaid", "Requested", "Confirmed", "covers", "NoShow", "no_show_fee", "Maitre", "Lopez,Kim,Dupont"),
    _t("marathon", "Runner", "runners", "bib", "laps", "split_time", "Warming", "Racing", "lap", "Finished", "seconds", "Marshal", "A17,B23,C42"),
)

THEME_BY_KEY: Final[dict[str, Theme]] = {t.key: t for t in THEMES}

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_CAMEL = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def words(text: str) -> set[str]:
    """Lower-case identifier tokens of ``text`` plus their ``snake_case``/``CamelCase`` parts."""
    out: set[str] = set()
    for tok in _WORD.findall(text):
        out.add(tok.lower())
        for piece in tok.split("_"):
            out.update(p.lower() for p in _CAMEL.findall(piece))
    return out


def vocabulary(theme: Theme) -> frozenset[str]:
    """The theme's distinctive names (lower case): entity singular/plural, status variants, actor."""
    names = {theme.e, theme.es, theme.actor.lower()} | {v.name.lower() for v in theme.variants}
    return frozenset(names)


def theme_words(theme: Theme) -> set[str]:
    """Every word any of the theme's names and sample values contribute to a program."""
    parts = [theme.E, theme.es, theme.label, theme.count, theme.amount, theme.actor, theme.status,
             *theme.sample, *(v.name for v in theme.variants),
             *(v.payload or "" for v in theme.variants)]
    return words(" ".join(parts))


def _check_disjoint() -> None:
    """Import-time guard: no theme's vocabulary occurs among another theme's words."""
    for t in THEMES:
        for u in THEMES:
            clash = vocabulary(t) & theme_words(u) if t is not u else set()
            if clash:
                raise AssertionError(f"theme {t.key!r} names {sorted(clash)} also occur in theme {u.key!r}")


_check_disjoint()
