# The paging client of issue 32 item 4, run by bench/extraction-loader-python.ts: it pages through one named query
# the way the platform's public BigQuery loader does (SkillsWorkflow/GoogleBigQuery, src/sw_bq_loader/
# skills_workflow.py, fetch_all and _execute_page; written here from those facts, not copied): a requests.Session,
# POST .../api/v3/analytics/named-query/<name>/dynamic-execute with Accept and Content-Type application/json and
# the X-AppTenant / X-AppId / X-AppSecret headers, a body {"queryBuilder": {"skip", "take", "orderBy"}} ordered
# ascending on one field, skip = the number of rows read so far, stopping at the first page's totalCount, at an
# empty page or at a short one, and failing on a page whose fingerprint (its length, first and last row) repeats.
# The platform's default cap of 500,000 rows a query (SW_MAX_ROWS_PER_QUERY) is raised to read all.
#
# What it keeps to check the read (not what the loader keeps): each row's key and a CRC-32 of a few of its
# fields, timed apart and left out of the seconds it reports. Usage:
#   python3 extraction-loader-python.py BASE TENANT APP SECRET TAKE QUERY KEY OUT
# prints one JSON line; OUT gets "key,crc" per distinct key (the key as 32 hex digits).
import json
import sys
import time
import zlib
from urllib.parse import quote

import requests

base, tenant, app, secret, take, name, key, out = sys.argv[1:9]
take = int(take)
# Fields compared with the CSV export's (printed alike in both formats; null as empty).
CHECKED = ("TimesheetId", "UserId", "Day", "JobId", "Status", "ProjectId")

session = requests.Session()
url = f"{base}/api/v3/analytics/named-query/{quote(name, safe='')}/dynamic-execute"
headers = {
    "Accept": "application/json",
    "Content-Type": "application/json",
    "X-AppTenant": tenant,
    "X-AppId": app,
    "X-AppSecret": secret,
}


def page(builder):
    r = session.post(url, headers=headers, json={"queryBuilder": builder}, timeout=90)
    if r.status_code != 200:
        raise SystemExit("HTTP %d: %s" % (r.status_code, r.text[:300]))
    p = r.json()
    return p["data"], p.get("totalCount")


def fingerprint(rows):
    if not rows:
        return "empty"
    return json.dumps([len(rows), rows[0], rows[-1]], sort_keys=True, default=str, separators=(",", ":"))


seen = {}
book = 0.0


def keep(rows):
    global book
    t = time.perf_counter()
    for r in rows:
        text = "|".join("" if r[f] is None else str(r[f]) for f in CHECKED)
        seen[int(r[key].replace("-", ""), 16)] = zlib.crc32(text.encode())
    book += time.perf_counter() - t


start = time.perf_counter()
base_builder = {"skip": 0, "take": take, "orderBy": [{"field": key, "direction": "asc"}]}
rows, total = page(base_builder)
keep(rows)
n, pages = len(rows), 1
if n >= take:
    fingerprints = {fingerprint(rows)}
    while total is None or n < total:
        builder = dict(base_builder, skip=n, take=take)
        rows, _ = page(builder)
        pages += 1
        if not rows:
            print(f"an empty page at skip {n} (totalCount {total})", file=sys.stderr)
            break
        f = fingerprint(rows)
        if f in fingerprints:
            raise SystemExit(f"{name} returned a repeated page at skip {n}")
        fingerprints.add(f)
        n += len(rows)
        keep(rows)
        if len(rows) < take:
            if n < (total or 0):
                print(f"a short page of {len(rows)} rows at skip {n - len(rows)} (totalCount {total})", file=sys.stderr)
            break
seconds = time.perf_counter() - start - book
with open(out, "w") as f:
    for k, c in seen.items():
        f.write("%032x,%d\n" % (k, c))
print(json.dumps({"rows": n, "distinct": len(seen), "pages": pages, "total": total, "seconds": seconds, "bookkeeping": book}))
