"""A corpus of pydantic models and typed functions, as real tools are written, each with a few
instances (model instances, or argument dicts for functions). Used by tests/test_pydantic.py."""

from __future__ import annotations

import dataclasses
import enum
import uuid
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal
from typing import Annotated, Literal, Optional, Union

from pydantic import (UUID4, AnyUrl, BaseModel, Base64Bytes, ConfigDict, Field, HttpUrl,
                      IPvAnyAddress, NonNegativeInt, PositiveInt, SecretStr, conint)


class Unit(str, enum.Enum):
    celsius = "celsius"
    fahrenheit = "fahrenheit"


class Priority(enum.IntEnum):
    low = 1
    high = 2


class GetWeather(BaseModel):
    """Current weather for a city."""
    city: str
    unit: Unit = Unit.celsius


class SearchWeb(BaseModel):
    query: str = Field(description="what to look for")
    limit: int = 10
    site: Optional[str] = None


class Optionals(BaseModel):
    a: Optional[int] = None
    b: Optional[float] = None
    c: Optional[bool] = None
    d: str | None = None


class Literals(BaseModel):
    mode: Literal["fast", "slow"]
    level: Literal[1, 2, 3] = 1
    flag: Literal[True] = True


class Address(BaseModel):
    street: str
    zip_code: str = Field(pattern=r"^[0-9]{5}$")


class Person(BaseModel):
    name: str
    address: Address
    previous: list[Address] = []


class TreeNode(BaseModel):
    label: str
    children: list[TreeNode] = []


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: int


class Dog(BaseModel):
    kind: Literal["dog"]
    good: bool


class Adopt(BaseModel):
    pet: Annotated[Union[Cat, Dog], Field(discriminator="kind")]


class PlainUnion(BaseModel):
    value: Union[int, str]


class Sets(BaseModel):
    tags: set[str]
    ids: frozenset[int] = frozenset()


class Tuples(BaseModel):
    point: tuple[float, float]
    labelled: tuple[str, int, bool]
    rest: tuple[int, ...] = ()


class Constrained(BaseModel):
    age: conint(ge=0, le=150)
    score: float = Field(ge=0, lt=1)
    count: PositiveInt
    offset: NonNegativeInt = 0


class Times(BaseModel):
    when: datetime
    day: date
    at: time
    span: timedelta


class Ids(BaseModel):
    request_id: uuid.UUID
    user_id: UUID4


class Links(BaseModel):
    homepage: AnyUrl


class ApiLink(BaseModel):
    api: HttpUrl


class Network(BaseModel):
    host: IPvAnyAddress
    port: int = Field(ge=1, le=65535)


class Secrets(BaseModel):
    password: SecretStr
    blob: Base64Bytes


class Money(BaseModel):
    amount: Decimal


class Dicts(BaseModel):
    headers: dict[str, str]
    weights: dict[str, float] = {}


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")
    x: int
    y: int


class Aliased(BaseModel):
    model_config = ConfigDict(populate_by_name=True)
    user_name: str = Field(alias="userName")


class Nullable(BaseModel):
    note: Optional[str]


class ListOfEnums(BaseModel):
    units: list[Unit]
    priority: Priority = Priority.low


class NestedOptional(BaseModel):
    address: Optional[Address] = None


class Lengths(BaseModel):
    code: str = Field(min_length=2, max_length=4)
    items: list[int] = Field(min_length=1, max_length=3)


class UnitSet(BaseModel):
    units: set[Unit]


class CreateEvent(BaseModel):
    title: str
    start: datetime
    attendees: list[str] = []
    reminder: Optional[Literal[5, 15, 60]] = None


@dataclasses.dataclass
class Point:
    x: float
    y: float


def send_email(to: str, subject: str, body: str = "", cc: Optional[list[str]] = None) -> None:
    """Send an email."""


def set_alarm(at: time, label: str = "alarm", repeat: bool = False) -> None:
    """Set an alarm."""


def move(direction: Literal["up", "down", "left", "right"], steps: int = 1) -> None:
    """Move the cursor."""


def lookup(key: Union[int, str], default: Optional[str] = None) -> None:
    """Look a key up."""


def paint(color: Unit, points: list[Point]) -> None:
    """Paint points (a function taking a dataclass)."""


_UTC = timezone.utc

#: (tool, instances): a model class with model instances, or a function with argument dicts
CORPUS = [
    (GetWeather, [GetWeather(city="Paris"), GetWeather(city="Köln", unit=Unit.fahrenheit)]),
    (SearchWeb, [SearchWeb(query="q"), SearchWeb(query='say "hi"\n', limit=-3, site="x.org")]),
    (Optionals, [Optionals(), Optionals(a=1, b=2.5, c=False, d="x")]),
    (Literals, [Literals(mode="fast"), Literals(mode="slow", level=3)]),
    (Address, [Address(street="Main St", zip_code="12345")]),
    (Person, [Person(name="A", address=Address(street="s", zip_code="00000"),
                     previous=[Address(street="t", zip_code="11111")])]),
    (TreeNode, [TreeNode(label="root", children=[TreeNode(label="leaf")])]),
    (Adopt, [Adopt(pet=Cat(kind="cat", lives=9)), Adopt(pet=Dog(kind="dog", good=True))]),
    (PlainUnion, [PlainUnion(value=3), PlainUnion(value="three")]),
    (Sets, [Sets(tags={"a"}, ids=frozenset({1}))]),
    (Tuples, [Tuples(point=(1.5, -2.0), labelled=("a", 1, True), rest=(1, 2, 3))]),
    (Constrained, [Constrained(age=30, score=0.5, count=1),
                   Constrained(age=0, score=0.0, count=7, offset=3)]),
    (Times, [Times(when=datetime(2024, 2, 29, 12, 0, tzinfo=_UTC), day=date(2024, 1, 31),
                   at=time(9, 30, tzinfo=_UTC), span=timedelta(hours=1, minutes=2))]),
    (Ids, [Ids(request_id=uuid.uuid1(), user_id=uuid.uuid4())]),
    (Links, [Links(homepage="https://example.com/a?b=c"), Links(homepage="mailto:a@b.c")]),
    (ApiLink, [ApiLink(api="http://api.example.com/v1")]),
    (Network, [Network(host="10.0.0.1", port=80), Network(host="::1", port=65535)]),
    (Secrets, [Secrets(password="hunter2", blob=b"YWJj")]),
    (Money, [Money(amount=Decimal("1.50"))]),
    (Dicts, [Dicts(headers={"a": "b"}, weights={"x": 0.5})]),
    (Strict, [Strict(x=1, y=-1)]),
    (Aliased, [Aliased(userName="bob")]),
    (Nullable, [Nullable(note=None), Nullable(note="n")]),
    (ListOfEnums, [ListOfEnums(units=[Unit.celsius], priority=Priority.high)]),
    (NestedOptional, [NestedOptional(), NestedOptional(address=Address(street="s",
                                                                      zip_code="99999"))]),
    (Lengths, [Lengths(code="ab", items=[1]), Lengths(code="abcd", items=[1, 2, 3])]),
    (UnitSet, [UnitSet(units={Unit.celsius})]),
    (CreateEvent, [CreateEvent(title="t", start=datetime(2025, 1, 1, tzinfo=_UTC),
                               reminder=15)]),
    (Point, [{"x": 1.0, "y": 2.0}]),
    (send_email, [{"to": "a@b.c", "subject": "s"},
                  {"to": "a@b.c", "subject": "s", "body": "b", "cc": ["d@e.f"]}]),
    (set_alarm, [{"at": "07:00:00Z"}, {"at": "07:00:00Z", "label": "x", "repeat": True}]),
    (move, [{"direction": "up"}, {"direction": "left", "steps": 3}]),
    (lookup, [{"key": 1}, {"key": "k", "default": None}]),
    (paint, [{"color": "celsius", "points": [{"x": 0.0, "y": 1.0}]}]),
]
