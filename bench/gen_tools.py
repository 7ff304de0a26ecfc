"""A deterministic generator of realistic N-tool sets (OpenAI ``tools`` JSON).

Tools are ``VERB_ENTITY`` for a dozen business entities (customer, order, invoice, ...) and six
verbs (get, list, search, create, update, delete). Their arguments have what real tool
definitions have: nested objects (an address inside a customer, a filter inside a list call),
enums, arrays of strings and of objects with ``minItems``/``maxItems``, optional arguments,
nullable type lists (``["string", "null"]``), ``const`` and ``anyOf``.

Only the keywords toolc enforces today are used: ``type`` (a name or a list), ``properties``,
``required``, ``additionalProperties: false``, ``enum``, ``const``, ``items``, ``minItems``,
``maxItems``, ``anyOf`` and ``description``.

The same N always gives the same file, and a smaller set is a prefix of a larger one::

    python bench/gen_tools.py 10 -o schemas/tools10.json
    python bench/gen_tools.py 80 -o schemas/tools80.json
"""

from __future__ import annotations

import argparse
import json
import random
import sys

VERBS = ("get", "list", "search", "create", "update", "delete")


# -- building blocks -------------------------------------------------------------------------

def s(desc: str) -> dict:
    return {"type": "string", "description": desc}


def nullable(desc: str, t: str = "string") -> dict:
    return {"type": [t, "null"], "description": desc}


def i(desc: str) -> dict:
    return {"type": "integer", "description": desc}


def num(desc: str) -> dict:
    return {"type": "number", "description": desc}


def b(desc: str) -> dict:
    return {"type": "boolean", "description": desc}


def enum(desc: str, *values) -> dict:
    return {"type": "string", "enum": list(values), "description": desc}


def arr(item: dict, desc: str, lo: int | None = None, hi: int | None = None) -> dict:
    out = {"type": "array", "items": item, "description": desc}
    if lo is not None:
        out["minItems"] = lo
    if hi is not None:
        out["maxItems"] = hi
    return out


def obj(desc: str, props: dict, required=()) -> dict:
    return {"type": "object", "description": desc, "properties": props,
            "required": list(required), "additionalProperties": False}


ADDRESS = obj("A postal address.", {
    "street": s("Street and number."),
    "city": s("City."),
    "postal_code": s("Postal or ZIP code."),
    "country": enum("ISO 3166 country code.", "US", "GB", "DE", "FR", "JP", "BR", "IN"),
    "region": nullable("State or region, if the country has them."),
}, required=("street", "city", "country"))

MONEY = obj("An amount of money.", {
    "amount": num("Amount in the currency's main unit."),
    "currency": enum("ISO 4217 currency code.", "USD", "EUR", "GBP", "JPY"),
}, required=("amount", "currency"))

ID = {"anyOf": [{"type": "string", "description": "Opaque id, e.g. \"cus_42\"."},
                {"type": "integer", "description": "Legacy numeric id."}],
      "description": "The record's id."}

SCHEDULE = {"anyOf": [
    obj("A one-off date.", {"kind": {"const": "once"}, "date": s("ISO 8601 date.")},
        required=("kind", "date")),
    obj("A recurrence.", {"kind": {"const": "recurring"},
                          "every": enum("Period.", "day", "week", "month"),
                          "count": nullable("Number of repetitions; null for no end.",
                                            "integer")},
        required=("kind", "every")),
], "description": "When it happens."}

# entity -> (description, fields); the first field is the entity's main required field
ENTITIES: dict[str, tuple[str, dict]] = {
    "customer": ("a customer account", {
        "name": s("Full name."),
        "email": s("Email address."),
        "phone": nullable("Phone number in E.164 form."),
        "address": ADDRESS,
        "tier": enum("Loyalty tier.", "free", "silver", "gold", "platinum"),
        "tags": arr(s("A tag."), "Free-form tags.", hi=10),
        "marketing_opt_in": b("Whether the customer accepts marketing email."),
    }),
    "order": ("a sales order", {
        "customer_id": ID,
        "items": arr(obj("One order line.", {
            "sku": s("Stock-keeping unit."),
            "quantity": i("How many."),
            "unit_price": MONEY,
            "gift_wrap": b("Wrap this line as a gift."),
        }, required=("sku", "quantity")), "Order lines.", lo=1),
        "shipping_address": ADDRESS,
        "shipping_method": enum("Carrier service.", "standard", "express", "overnight", "pickup"),
        "notes": nullable("Notes for the warehouse."),
        "coupon_codes": arr(s("A coupon code."), "Coupons to apply.", hi=3),
    }),
    "invoice": ("an invoice", {
        "order_id": ID,
        "due_date": s("ISO 8601 due date."),
        "total": MONEY,
        "status": enum("Payment status.", "draft", "open", "paid", "void", "uncollectible"),
        "payment_terms": enum("Terms.", "net_15", "net_30", "net_60", "due_on_receipt"),
        "memo": nullable("Memo printed on the invoice."),
    }),
    "ticket": ("a support ticket", {
        "subject": s("One-line summary."),
        "body": s("Full description of the problem."),
        "priority": enum("Urgency.", "low", "normal", "high", "urgent"),
        "assignee": nullable("Agent user name, or null for the queue."),
        "labels": arr(enum("A label.", "bug", "billing", "feature", "question", "outage"),
                      "Labels.", hi=5),
        "requester": obj("Who asked.", {"email": s("Email address."), "name": s("Name.")},
                         required=("email",)),
    }),
    "event": ("a calendar event", {
        "title": s("Event title."),
        "start": s("Start date-time, ISO 8601."),
        "duration_minutes": i("Length in minutes."),
        "attendees": arr(obj("An attendee.", {
            "email": s("Email address."),
            "optional": b("Attendance is optional."),
            "response": enum("RSVP.", "needs_action", "accepted", "declined", "tentative"),
        }, required=("email",)), "People invited."),
        "location": nullable("Room or address."),
        "schedule": SCHEDULE,
        "reminder_minutes": arr(i("Minutes before start."), "Reminders.", hi=3),
    }),
    "product": ("a catalogue product", {
        "title": s("Product title."),
        "price": MONEY,
        "category": enum("Category.", "books", "electronics", "garden", "toys", "clothing"),
        "dimensions": obj("Package size in centimetres.", {
            "length": num("Length."), "width": num("Width."), "height": num("Height."),
            "weight_kg": nullable("Weight in kilograms.", "number"),
        }, required=("length", "width", "height")),
        "variants": arr(obj("A variant.", {
            "sku": s("Stock-keeping unit."),
            "color": nullable("Colour name."),
            "size": enum("Size.", "XS", "S", "M", "L", "XL"),
            "stock": i("Units in stock."),
        }, required=("sku",)), "Variants."),
        "active": b("Listed in the shop."),
    }),
    "shipment": ("a parcel shipment", {
        "order_id": ID,
        "carrier": enum("Carrier.", "ups", "fedex", "dhl", "usps", "royal_mail"),
        "tracking_number": nullable("Carrier tracking number."),
        "destination": ADDRESS,
        "parcels": arr(obj("A parcel.", {
            "weight_kg": num("Weight."),
            "fragile": b("Handle with care."),
        }, required=("weight_kg",)), "Parcels.", lo=1),
        "signature_required": b("Require a signature on delivery."),
    }),
    "employee": ("an employee record", {
        "full_name": s("Full name."),
        "department": enum("Department.", "engineering", "sales", "finance", "support",
                           "legal", "operations"),
        "title": s("Job title."),
        "manager_id": nullable("Manager's employee id.", "integer"),
        "start_date": s("ISO 8601 start date."),
        "skills": arr(s("A skill."), "Skills.", hi=15),
        "home_address": ADDRESS,
    }),
    "document": ("a stored document", {
        "path": s("Folder path, e.g. /reports/2025."),
        "filename": s("File name with extension."),
        "content": s("Text content."),
        "format": enum("File format.", "txt", "md", "html", "pdf", "docx"),
        "shared_with": arr(obj("A share.", {
            "user": s("User name."),
            "role": enum("Access.", "viewer", "commenter", "editor"),
        }, required=("user", "role")), "Sharing."),
        "overwrite": b("Replace an existing file."),
    }),
    "campaign": ("a marketing campaign", {
        "name": s("Campaign name."),
        "channel": enum("Channel.", "email", "sms", "push", "social"),
        "budget": MONEY,
        "audience": obj("Who is targeted.", {
            "countries": arr(enum("Country.", "US", "GB", "DE", "FR", "JP", "BR", "IN"),
                             "Countries.", lo=1, hi=3),
            "min_age": nullable("Minimum age.", "integer"),
            "tiers": arr(enum("Tier.", "free", "silver", "gold", "platinum"), "Tiers.", hi=4),
        }, required=("countries",)),
        "schedule": SCHEDULE,
        "a_b_test": b("Split the audience for an A/B test."),
    }),
    "repository": ("a source repository", {
        "name": s("Repository name."),
        "visibility": enum("Visibility.", "public", "private", "internal"),
        "default_branch": s("Default branch."),
        "topics": arr(s("A topic."), "Topics.", hi=20),
        "protection": obj("Branch protection.", {
            "required_reviews": i("Approvals needed."),
            "require_ci": b("CI must pass."),
            "allowed_merge": arr(enum("Merge method.", "merge", "squash", "rebase"),
                                 "Allowed merge methods.", lo=1, hi=3),
        }, required=("required_reviews",)),
        "description": nullable("Short description."),
    }),
    "reservation": ("a restaurant or hotel reservation", {
        "venue": s("Venue name."),
        "date": s("ISO 8601 date."),
        "party_size": i("Number of guests."),
        "kind": enum("Kind.", "restaurant", "hotel"),
        "guest": obj("Main guest.", {"name": s("Name."), "phone": nullable("Phone.")},
                     required=("name",)),
        "special_requests": arr(s("A request."), "Requests.", hi=5),
        "deposit": MONEY,
    }),
    "dataset": ("a dataset in the warehouse", {
        "table": s("Fully qualified table name."),
        "columns": arr(obj("A column.", {
            "name": s("Column name."),
            "type": enum("SQL type.", "int", "bigint", "float", "text", "bool", "date",
                         "timestamp"),
            "nullable": b("May hold NULL."),
        }, required=("name", "type")), "Columns.", lo=1),
        "partition_by": nullable("Partition column."),
        "retention_days": nullable("Days to keep rows; null keeps forever.", "integer"),
        "owner_team": enum("Owning team.", "data", "analytics", "ml", "finance"),
    }),
    "alert": ("a monitoring alert rule", {
        "metric": s("Metric name, e.g. cpu.usage."),
        "condition": obj("When to fire.", {
            "operator": enum("Comparison.", ">", ">=", "<", "<=", "=="),
            "threshold": num("Threshold value."),
            "for_minutes": i("How long the condition must hold."),
        }, required=("operator", "threshold")),
        "severity": enum("Severity.", "info", "warning", "critical"),
        "notify": arr({"anyOf": [
            obj("Email target.", {"email": s("Address.")}, required=("email",)),
            obj("Pager target.", {"pager_service": s("Service key."),
                                  "escalate": b("Escalate if unacknowledged.")},
                required=("pager_service",)),
        ]}, "Who to notify.", lo=1, hi=3),
        "muted": b("Mute the alert."),
    }),
}

LIST_SORT_ORDER = enum("Sort direction.", "asc", "desc")


# -- tools from (verb, entity) -----------------------------------------------------------------

def _pick(rng: random.Random, fields: dict, k: int) -> dict:
    names = list(fields)
    keep = set(rng.sample(names, min(k, len(names))))
    return {n: fields[n] for n in names if n in keep}


def _filter_copy(schema: dict) -> dict:
    """A field's schema as a filter: enums and scalars as they are, objects and arrays dropped."""
    t = schema.get("type")
    if "enum" in schema or t in ("string", "integer", "number", "boolean") or \
            isinstance(t, list):
        return schema
    return {}


def make_tool(verb: str, entity: str, rng: random.Random) -> dict:
    what, fields = ENTITIES[entity]
    main = next(iter(fields))
    name = f"{verb}_{entity}"
    if verb == "get":
        params = obj("", {
            "id": ID,
            "include": arr(enum("A related record.", *[f for f in fields
                                                       if "properties" in fields[f]
                                                       or fields[f].get("type") == "array"]
                                or ["history"]),
                           "Related records to expand.", hi=4),
            "fields": arr(enum("A field.", *fields), "Only return these fields."),
        }, required=("id",))
        desc = f"Fetch {what} by id."
    elif verb == "list":
        filt = {n: f for n, f in ((n, _filter_copy(f)) for n, f in fields.items()) if f}
        params = obj("", {
            "filter": obj("Only records matching all of these.", _pick(rng, filt, 3)),
            "sort": obj("Order of the results.", {
                "field": enum("Sort key.", *fields), "order": LIST_SORT_ORDER},
                required=("field",)),
            "limit": i("Page size, 1 to 100."),
            "cursor": nullable("Cursor from the previous page, or null for the first."),
        })
        desc = f"List {what}s, filtered and sorted."
    elif verb == "search":
        params = obj("", {
            "query": s("Full-text query."),
            "fields": arr(enum("A field to search.", *fields), "Fields to search.", lo=1),
            "fuzzy": b("Allow spelling mistakes."),
            "page": i("Page number, from 1."),
        }, required=("query",))
        desc = f"Full-text search over {what}s."
    elif verb == "create":
        extra = _pick(rng, {n: f for n, f in fields.items() if n != main}, 4)
        props = {main: fields[main], **extra}
        req = [main] + [n for n in extra if rng.random() < 0.4]
        params = obj("", {**props, "dry_run": b("Validate without saving.")}, required=req)
        desc = f"Create {what}."
    elif verb == "update":
        params = obj("", {
            "id": ID,
            "changes": obj("Fields to change; others are kept.", _pick(rng, fields, 5)),
            "if_version": nullable("Only update if the record is at this version.", "integer"),
            "api_version": {"const": "2024-06-01", "description": "API version."},
        }, required=("id", "changes", "api_version"))
        desc = f"Update {what}."
    elif verb == "delete":
        params = obj("", {
            "id": ID,
            "reason": nullable("Why it is deleted, for the audit log."),
            "mode": enum("Soft delete keeps a tombstone.", "soft", "hard"),
        }, required=("id",))
        desc = f"Delete {what}."
    else:
        raise ValueError(f"unknown verb {verb!r}")
    params.pop("description", None)
    return {"type": "function", "function": {"name": name, "description": desc,
                                             "parameters": params}}


def generate(n: int, seed: int = 0) -> list[dict]:
    """The first ``n`` tools of a fixed shuffled order of every (verb, entity) pair.

    Past the 84 pairs, further rounds reuse the pairs with a numbered name (``get_order_2``)
    and arguments drawn anew, so large sets stay distinct tool by tool."""
    pairs = [(v, e) for e in ENTITIES for v in VERBS]
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    random.Random(seed).shuffle(pairs)
    out = []
    for k in range(n):
        v, e = pairs[k % len(pairs)]
        rnd = k // len(pairs)
        tool = make_tool(v, e, random.Random(f"{seed}:{v}_{e}" + (f":{rnd}" if rnd else "")))
        if rnd:
            tool["function"]["name"] += f"_{rnd + 1}"
        out.append(tool)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("n", type=int, help="number of tools (at least 1)")
    ap.add_argument("-o", "--output", help="output file (default: stdout)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    try:
        tools = generate(args.n, args.seed)
    except ValueError as e:
        ap.error(str(e))
    text = json.dumps(tools, indent=2, ensure_ascii=False) + "\n"
    if args.output:
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
