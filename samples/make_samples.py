#!/usr/bin/env python3
"""Writes the sample dumps of the four sample apps, and their expected migrations.

Run from the project root: `python3 samples/make_samples.py` (needs `cjpeg` from libjpeg-turbo-progs).
The output is deterministic (seeded); the files are committed, so this only needs running to change them.

For each app it writes `samples/<app>/v1.json` (the v1 dump) and, computed here independently of the
Swift plan engine, `v2.expected.json` (the dump after `schemas/<app>/plan.yaml` with `--on-error keep`)
and `v2.rejects.ndjson` (pointer, operation and value of each value the plan sets aside).
"""

import base64
import json
import os
import random
import struct
import subprocess
import zlib
from decimal import Decimal

ROOT = os.path.dirname(os.path.abspath(__file__))
ALPHABET = "-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz"
JST = 9 * 3600


# ---------------------------------------------------------------- helpers


def push_id(ms, rng):
    """A push ID: 8 characters of time in ms (base 64, most significant first), 12 random ones."""
    head = ""
    for _ in range(8):
        head = ALPHABET[ms % 64] + head
        ms //= 64
    return head + "".join(rng.choice(ALPHABET) for _ in range(12))


def uid(rng):
    """A Firebase Auth uid: 28 letters and digits."""
    chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    return "".join(rng.choice(chars) for _ in range(28))


def db_key(k):
    """The Realtime Database's child order: 32-bit integer keys first, numerically, then by UTF-8 bytes."""
    if k == "0" or (k.lstrip("-").isdigit() and not k.lstrip("-").startswith("0") and k != "-0"):
        n = int(k)
        if -(2**31) <= n < 2**31:
            return (0, n, b"")
    return (1, 0, k.encode("utf-8"))


def canonical(v):
    if isinstance(v, dict):
        return {k: canonical(v[k]) for k in sorted(v, key=db_key)}
    if isinstance(v, list):
        return [canonical(x) for x in v]
    return v


def write_json(path, value):
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(canonical(value), ensure_ascii=False, indent=2, separators=(",", ": ")))
        f.write("\n")


def write_ndjson(path, rows):
    with open(path, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n")


def ptr(*keys):
    return "".join("/" + str(k).replace("~", "~0").replace("/", "~1") for k in keys)


def jst_text(ms):
    """`yyyy/MM/dd HH:mm:ss` in Asia/Tokyo (no daylight saving since 1951)."""
    import datetime

    t = datetime.datetime.fromtimestamp(ms // 1000 + JST, datetime.timezone.utc)
    return t.strftime("%Y/%m/%d %H:%M:%S")


def png_bytes(width, height, pixel):
    """A real RGB PNG written with zlib."""
    raw = b"".join(b"\x00" + b"".join(bytes(pixel(x, y)) for x in range(width)) for y in range(height))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def jpeg_bytes(width, height, pixel, quality=70):
    """A real baseline JPEG: a PPM piped through cjpeg."""
    ppm = b"P6\n%d %d\n255\n" % (width, height) + b"".join(bytes(pixel(x, y)) for y in range(height) for x in range(width))
    return subprocess.run(["cjpeg", "-quality", str(quality)], input=ppm, capture_output=True, check=True).stdout


def gradient(r0, g0, b0, r1, g1, b1, width, height):
    """A diagonal colour gradient with some fixed grain, so it compresses like a small photo."""

    def pixel(x, y):
        t = (x + y) / (width + height - 2)
        grain = (x * 31 + y * 17 + x * y * 7) % 29 - 14
        return tuple(max(0, min(255, int(a + (b - a) * t) + grain)) for a, b in ((r0, r1), (g0, g1), (b0, b1)))

    return pixel


def data_uri(mime, data):
    return "data:%s;base64,%s" % (mime, base64.b64encode(data).decode("ascii"))


def reject(pointer, operation, value, output_pointer=None):
    """A rejected value: its pointer in v1.json and, when the plan moved or renamed it, in v2.json."""
    return {"pointer": pointer, "outputPointer": output_pointer or pointer, "operation": operation, "value": value}


# ---------------------------------------------------------------- todolist (Salada ToDo)


def todolist():
    rng = random.Random(20161227)
    titles = [
        "牛乳を買う", "企画書のドラフト 📝", "歯医者の予約", "部屋の掃除🧹", "Swiftの勉強", "年賀状を書く",
        "確定申告", "引っ越しの見積もり", "母の誕生日プレゼント🎁", "自転車のパンク修理", "読書: 吾輩は猫である",
        "ジムに行く💪", "プレゼン資料の修正", "観葉植物に水やり🌱", "請求書の発行", "家族旅行の計画 ✈️",
        "冷蔵庫の整理", "名刺の発注", "Firebaseのルールを見直す", "週報を書く", "レシピを調べる🍳", "車検",
        "住所変更の手続き", "写真の整理📷", "カメラの修理", "クリーニングを受け取る", "パスポート更新",
        "Salada 3.0 に移行", "ブログ記事の下書き", "庭の草むしり", "保険の見直し", "お花見の場所取り🌸",
        "beta版のテスト", "図書館に本を返す", "ToDo", "🍣", "会議室を予約する", "ペンキ塗り", "粗大ごみの申し込み",
        "税金の支払い",
    ]
    details = [
        "低脂肪のほう", "A4で3枚くらい。\n図を多めに", "午後がいい", None, "「The Swift Programming Language」を読む",
        "宛先リストを確認してから", None, "3社に依頼", "予算は5000円まで", None,
    ]
    progress_labels = ["これから着手", "着手中", "完了"]
    era2_start = 1498867200000  # 2017-07-01: Salada 3.0 wrote File values as objects
    images = {
        "jpeg1": jpeg_bytes(64, 48, gradient(250, 120, 60, 40, 90, 200, 64, 48)),
        "jpeg2": jpeg_bytes(48, 48, gradient(30, 160, 90, 240, 230, 80, 48, 48)),
        "png1": png_bytes(32, 32, lambda x, y: (255, 255, 255) if (x // 4 + y // 4) % 2 else (220 - 3 * x, 40 + 4 * y, 60)),
    }
    ms = 1480000000000  # 2016-11-24
    records = {}
    expected = {}
    rejects = []
    for i, title in enumerate(titles):
        ms += rng.randint(1, 20) * 86_400_000 + rng.randint(0, 86_399_999)
        key = push_id(ms, rng)
        r = {"_createdAt": ms, "_updatedAt": ms + rng.randint(0, 9) * 86_400_000 + rng.randint(0, 86_399_999), "title": title}
        d = details[i % len(details)]
        if d is not None:
            r["detail"] = d
        r["progress"] = progress_labels[rng.randint(0, 2)]
        count = [0, 1, 1, 2, 3][rng.randint(0, 4)]
        files = []
        for n in range(count):
            upload = ms + (n + 1) * 1500
            if ms < era2_start:
                files.append(str(upload))
            else:
                name = "%d.jpg" % upload
                files.append({
                    "mimeType": "image/jpeg",
                    "name": name,
                    "url": "https://firebasestorage.googleapis.com/v0/b/salada-todo.appspot.com/o/"
                    + "v1%%2Ftodolist%%2F%s%%2Fimage%d%%2F%s?alt=media&token=%08x-%04x-4%03x-a%03x-%012x"
                    % (key, n + 1, name, rng.getrandbits(32), rng.getrandbits(16), rng.getrandbits(12), rng.getrandbits(12), rng.getrandbits(48)),
                })
        # A few inline images, the classic mistake; extract-blobs moves them out later.
        if i == 4:
            files = [data_uri("image/jpeg", images["jpeg1"])]
        if i == 13:
            files = [files[0] if files else str(ms + 1500), data_uri("image/png", images["png1"])]
        if i == 27:
            files = [data_uri("image/jpeg", images["jpeg2"])] + files[:2]
        # An era-2 upload that was cancelled before it had a URL.
        if i == 30:
            files = [{"mimeType": "image/jpeg", "name": "%d.jpg" % (ms + 1500)}]
        for n, f in enumerate(files):
            r["image%d" % (n + 1)] = f
        r["photo_count"] = str(len(files))
        records[key] = r
        pointer = ptr("v1", "todolist", key)
        v2_pointer = ptr("v2", "todolist", key)

        # Odd values of real data.
        if i == 7:
            r["photo_count"] = ""  # left empty by an old client
        if i == 11:
            r["photo_count"] = "２"  # a full-width digit typed with the Japanese IME
        if i == 16:
            r["progress"] = "保留"  # a label a later app version added
        if i == 21:
            del r["progress"]
        if i == 24:
            del r["_updatedAt"]
        if i == 33:
            # The upload of image1 was cancelled after 4 seconds, image2 made it.
            r = {k: v for k, v in r.items() if not k.startswith("image")}
            r["image2"] = str(ms + 3000)
            r["photo_count"] = "1"
            records[key] = r

        # The expected v2 record: rename, convert, map, collect, normalize, move.
        e = {}
        if "_createdAt" in r:
            e["createdAt"] = r["_createdAt"]
        if "_updatedAt" in r:
            e["updatedAt"] = r["_updatedAt"]
        e["title"] = r["title"]
        if "detail" in r:
            e["detail"] = r["detail"]
        pc = r["photo_count"]
        if pc.isascii() and pc.isdigit():
            e["photoCount"] = int(pc)
        else:
            e["photoCount"] = pc
            rejects.append(reject(pointer + "/photo_count", "convert", pc, v2_pointer + "/photoCount"))
        if "progress" in r:
            table = {"これから着手": "todo", "着手中": "doing", "完了": "done"}
            if r["progress"] in table:
                e["progress"] = table[r["progress"]]
            else:
                e["progress"] = r["progress"]
                rejects.append(reject(pointer + "/progress", "map", r["progress"], v2_pointer + "/progress"))
        present = [r.get("image%d" % n) for n in (1, 2, 3)]
        if any(present):
            first_gap = present.index(None) if None in present else 3
            if any(present[first_gap:]):
                group = {"image%d" % (n + 1): v for n, v in enumerate(present) if v is not None}
                e.update(group)
                rejects.append(reject(pointer, "collect", group, v2_pointer))
            else:
                e["images"] = [
                    {"name": v} if isinstance(v, str) and not v.startswith("data:") else v for v in present if v is not None
                ]
        expected[key] = e

    users = {}
    for n, name in enumerate(["さくら", "Taro Yamada", "ゆうき🐣"]):
        u = uid(rng)
        users[u] = {"_createdAt": 1479000000000 + n * 7_654_321, "_updatedAt": 1479000000000 + n * 7_654_321, "name": name}
    v1 = {"v1": {"todolist": records, "user": users}}
    v2 = {"v1": {"user": users}, "v2": {"todolist": expected}}
    out = os.path.join(ROOT, "todolist")
    write_json(os.path.join(out, "v1.json"), v1)
    write_json(os.path.join(out, "v2.expected.json"), v2)
    write_ndjson(os.path.join(out, "v2.rejects.ndjson"), sorted(rejects, key=lambda r: r["pointer"]))


# ---------------------------------------------------------------- chat


def chat():
    rng = random.Random(1701)
    people = [("はるか", uid(rng)), ("Ken", uid(rng)), ("みどり🍀", uid(rng)), ("大輔", uid(rng))]
    lines = [
        "おはよう！", "今日の打ち合わせ、15時からで大丈夫？", "了解です👍", "資料送りました", "ありがとう🙏",
        "駅に着いたよ", "ちょっと遅れます💦\n5分くらい", "🎉🎉🎉", "写真見た？", "あけましておめでとう🎍",
        "今年もよろしく！", "ランチどうする？", "ラーメン🍜", "OK", "また明日",
        "\"引用\" と 'クォート' と \\ バックスラッシュ", "メリークリスマス🎄", "📷", "既読スルーしないで😢",
    ]
    users = {}
    rejects = []
    expected_users = {}
    ms = 1482500000000  # 2016-12-23
    for owner_name, owner in people:
        messages = {}
        expected_messages = {}
        for n in range(rng.randint(6, 10)):
            ms += rng.randint(1, 600) * 60_000 + rng.randint(0, 59) * 1000
            key = push_id(ms + rng.randint(0, 999), rng)
            sender_name, sender = people[rng.randint(0, 3)]
            m = {"date": jst_text(ms), "senderId": sender, "senderName": sender_name, "text": lines[rng.randint(0, len(lines) - 1)]}
            e = dict(m)
            e["date"] = ms
            messages[key] = m
            expected_messages[key] = e
        users[owner] = {"messages": messages, "profile": {"name": owner_name}}
        expected_users[owner] = {"messages": expected_messages, "profile": {"name": owner_name}}

    # Odd values: an old client that wrote no seconds, a date that does not exist, a message without
    # senderName, one without date.
    owners = [p[1] for p in people]
    odd = sorted(users[owners[1]]["messages"])
    bad1, bad2, no_name, no_date = odd[1], odd[3], odd[4], odd[5]
    for key, text in ((bad1, "2016/12/27 13:42"), (bad2, "2016/02/30 10:00:00")):
        users[owners[1]]["messages"][key]["date"] = text
        expected_users[owners[1]]["messages"][key]["date"] = text
        rejects.append(reject(ptr("users", owners[1], "messages", key, "date"), "convert", text))
    del users[owners[1]]["messages"][no_name]["senderName"]
    del expected_users[owners[1]]["messages"][no_name]["senderName"]
    del users[owners[1]]["messages"][no_date]["date"]
    del expected_users[owners[1]]["messages"][no_date]["date"]

    out = os.path.join(ROOT, "chat")
    write_json(os.path.join(out, "v1.json"), {"users": users})
    write_json(os.path.join(out, "v2.expected.json"), {"users": expected_users})
    write_ndjson(os.path.join(out, "v2.rejects.ndjson"), sorted(rejects, key=lambda r: r["pointer"]))


# ---------------------------------------------------------------- todo-app


def todo_app():
    rng = random.Random(42)
    titles = [
        "買い物リストを作る", "メールの返信", "Buy milk 🥛", "洗濯", "ゴミ出し（燃えるゴミ）", "宿題", "英語の単語帳",
        "Call mom", "映画のチケット🎬", "散歩🐕", "エアコンのフィルター掃除", "振込", "本棚を組み立てる",
        "履歴書を書く", "Pay rent", "猫の餌を買う🐈", "ピアノの練習🎹", "お弁当の準備", "傘を返す",
        "パソコンのバックアップ💾", "年末の大掃除",
    ]
    users = {}
    expected = {}
    rejects = []
    broken = []
    ms = 1493596800000  # 2017-05-01
    owners = [uid(rng) for _ in range(3)]
    for o in owners:
        users[o] = {"items": {}}
        expected[o] = {"items": {}}
    for i, title in enumerate(titles):
        ms += rng.randint(1, 72) * 3600_000 + rng.randint(0, 3599_999)
        key = push_id(ms, rng)
        owner = owners[i % 3]
        item = {"title": title}
        if i == 3:
            item = {"title": ""}  # empty title
            broken.append((ptr("users", owner, "items", key, "title"), "empty title"))
        if i == 8:
            item = {"title": 42}  # a number where a string is required
            broken.append((ptr("users", owner, "items", key, "title"), "title is a number"))
        if i == 14:
            item = {"note": "タイトルを入れ忘れた"}  # no title at all
            broken.append((ptr("users", owner, "items", key), "no title"))
        users[owner]["items"][key] = item
        e = dict(item)
        e["completed"] = False
        e["createdAt"] = ms
        expected[owner]["items"][key] = e
    # An item written by hand in the console, with a key that is not a push ID.
    owner = owners[0]
    users[owner]["items"]["first-item"] = {"title": "はじめてのToDo"}
    expected[owner]["items"]["first-item"] = {"title": "はじめてのToDo", "completed": False}
    rejects.append(reject(ptr("users", owner, "items", "first-item", "createdAt"), "backfill", "first-item"))

    out = os.path.join(ROOT, "todo-app")
    write_json(os.path.join(out, "v1.json"), {"users": users})
    write_json(os.path.join(out, "v2.expected.json"), {"users": expected})
    write_ndjson(os.path.join(out, "v2.rejects.ndjson"), sorted(rejects, key=lambda r: r["pointer"]))
    return sorted(broken)


# ---------------------------------------------------------------- wedding


def wedding():
    rng = random.Random(20170603)
    guests = [("新郎 健太", uid(rng)), ("新婦 美咲", uid(rng)), ("友人代表 翔", uid(rng)), ("Emily", uid(rng)), ("おばあちゃん", uid(rng))]
    bodies = [
        "本日はお越しいただきありがとうございます💐", "乾杯🥂", "ケーキ入刀🍰", "お色直し👘", "余興のダンス💃",
        "両親への手紙😭", "集合写真📸", "二次会もよろしく！",
    ]
    palette = [(250, 200, 210), (255, 240, 200), (200, 220, 250), (230, 210, 250), (210, 240, 220), (250, 220, 180), (240, 240, 240), (220, 200, 190)]
    articles = {}
    expected = {}
    rejects = []
    bucket_photos = {}
    t = 1496466000  # 2017-06-03 14:00 JST, in seconds (Date.now() / 1000 in the web app)
    for i, body in enumerate(bodies):
        t += rng.randint(300, 1800)
        key = push_id(t * 1000 + rng.randint(0, 999), rng)
        name, author = guests[i % len(guests)]
        a = {"author": author, "authorName": name, "body": body, "created": t}
        c0, c1 = palette[i], palette[(i + 3) % len(palette)]
        photo = jpeg_bytes(80, 60, gradient(*c0, *c1, 80, 60), quality=60)
        if i != 5:  # the upload of article 5 was cancelled
            a["photo"] = data_uri("image/jpeg", photo)
        if i < 3:
            bucket_photos[key] = photo
        comments = {}
        ct = t
        for n in range(rng.randint(0, 3)):
            ct += rng.randint(20, 600)
            cname, cuid = guests[rng.randint(0, len(guests) - 1)]
            comments[push_id(ct * 1000, rng)] = {"created": ct, "name": cname, "text": ["おめでとう！🎉", "素敵✨", "泣いた", "お幸せに💕"][rng.randint(0, 3)], "uid": cuid}
        if comments:
            a["comments"] = comments
        likes = {g[1]: True for g in guests if rng.random() < 0.5}
        if likes:
            a["likes"] = likes
        if i == 2:
            a["created"] = 1496467234.5  # an older client wrote fractional seconds
        if i == 6:
            a["created"] = str(t)  # and one wrote a string
        articles[key] = a

        e = {k: v for k, v in a.items() if k not in ("author", "created", "photo")}
        e["authorId"] = a["author"]
        if "photo" in a:
            e["image"] = a["photo"]
        if isinstance(a["created"], str):
            e["createdAt"] = a["created"]
            rejects.append(reject(ptr("articles", key, "created"), "convert", a["created"], ptr("articles", key, "createdAt")))
        else:
            e["createdAt"] = int(Decimal(str(a["created"])) * 1000)
        expected[key] = e

    users = {g[1]: {"name": g[0]} for g in guests}
    out = os.path.join(ROOT, "wedding")
    write_json(os.path.join(out, "v1.json"), {"articles": articles, "users": users})
    write_json(os.path.join(out, "v2.expected.json"), {"articles": expected, "users": users})
    write_ndjson(os.path.join(out, "v2.rejects.ndjson"), sorted(rejects, key=lambda r: r["pointer"]))

    bucket = os.path.join(out, "bucket")
    os.makedirs(os.path.join(bucket, "photos"), exist_ok=True)
    for key, data in bucket_photos.items():
        with open(os.path.join(bucket, "photos", key + ".jpg"), "wb") as f:
            f.write(data)
    with open(os.path.join(bucket, "photos", "cover.png"), "wb") as f:
        f.write(png_bytes(24, 16, gradient(255, 230, 240, 200, 160, 190, 24, 16)))
    news = [
        {"date": "2017/05/20", "title": "招待状を発送しました💌", "body": "ご出欠のお返事は5月末までにお願いします。"},
        {"date": "2017/06/01", "title": "会場へのアクセス", "body": "最寄り駅から送迎バスが出ます🚌\n14:00発"},
        {"date": "2017/06/04", "title": "ありがとうございました！", "body": "写真をアップロードしてくださった皆さま、ありがとうございました📷"},
    ]
    with open(os.path.join(bucket, "news.json"), "w", encoding="utf-8") as f:
        f.write(json.dumps(news, ensure_ascii=False, indent=2) + "\n")


if __name__ == "__main__":
    for app in ("todolist", "chat", "todo-app", "wedding"):
        os.makedirs(os.path.join(ROOT, app), exist_ok=True)
    todolist()
    chat()
    broken = todo_app()
    wedding()
    print("todo-app items that break the title rule:")
    for pointer, why in broken:
        print("  %s  (%s)" % (pointer, why))
