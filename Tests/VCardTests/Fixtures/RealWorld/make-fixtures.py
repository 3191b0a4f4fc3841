#!/usr/bin/env python3
"""Writes the RealWorld fixtures. Invented people; shapes follow what phones and old
exports wrote (vCard 2.1 CHARSET/QUOTED-PRINTABLE/BASE64, VERSION-less cards, unindented
continuation lines). Legacy-charset bytes come from the system `iconv`, not from Python
codecs, so the test's decoding (glibc iconv via Swift) is checked against an independent
encoder run at authoring time. Run from this directory: python3 make-fixtures.py"""
import base64, subprocess

def enc(text, charset):
    return subprocess.run(["iconv", "-f", "UTF-8", "-t", charset], input=text.encode(), check=True,
                          capture_output=True).stdout

def qp(data):
    """vCard 2.1 QUOTED-PRINTABLE: every non-printable byte, '=' and non-ASCII as =XX,
    soft line breaks ('=' at the end) so no line passes 76 characters."""
    out, line = [], ""
    for b in data:
        piece = chr(b) if 0x20 < b < 0x7F and b != 0x3D else "=%02X" % b
        if len(line) + len(piece) > 73:
            out.append(line + "=")
            line = ""
        line += piece
    out.append(line)
    return "\r\n".join(out).encode()

def card(*lines):
    body = b""
    for line in lines:
        body += (line if isinstance(line, bytes) else line.encode()) + b"\r\n"
    return body

def write(name, data):
    with open(name, "wb") as f:
        f.write(data)

# 1. Shift_JIS, QUOTED-PRINTABLE (docomo/au style), incl. 表/ソ whose second byte is 0x5C.
sj = "SHIFT_JIS"
write("sjis-21-qp.vcf", card(
    "BEGIN:VCARD", "VERSION:2.1",
    b"N;CHARSET=SHIFT_JIS;ENCODING=QUOTED-PRINTABLE:" + qp(enc("山田;太郎;;;", sj)),
    b"FN;CHARSET=SHIFT_JIS;ENCODING=QUOTED-PRINTABLE:" + qp(enc("山田 太郎", sj)),
    b"SOUND;X-IRMC-N;CHARSET=SHIFT_JIS;ENCODING=QUOTED-PRINTABLE:" + qp(enc("ﾔﾏﾀﾞ;ﾀﾛｳ;;;", sj)),
    "TEL;CELL:090-1234-5678",
    "EMAIL;INTERNET:taro.yamada@example.jp",
    b"NOTE;CHARSET=SHIFT_JIS;ENCODING=QUOTED-PRINTABLE:" + qp(enc("表示はソフトで確認。二行目の予定もあります。長いメモは折り返されます。", sj)),
    "X-DCM-GN-ORIGINAL:1",
    "END:VCARD"))

# 2. A whole Shift_JIS file: raw bytes, CHARSET on most values, ORG untagged.
write("sjis-21-whole-file.vcf", card(
    "BEGIN:VCARD", "VERSION:2.1",
    b"N;CHARSET=SHIFT_JIS:" + enc("鈴木;表子;;;", sj),
    b"FN;CHARSET=SHIFT_JIS:" + enc("鈴木 表子", sj),
    b"ORG:" + enc("ソニー表参道店", sj),
    "TEL;HOME;VOICE:03-5555-0101",
    b"ADR;HOME;CHARSET=SHIFT_JIS:;;" + enc("港区芝公園4-2-8;東京都;;105-0011;日本", sj),
    "END:VCARD"))

# 3. ISO-2022-JP: one value QUOTED-PRINTABLE (ESC as =1B), one raw with ESC bytes on the line.
jis = "ISO-2022-JP"
write("iso2022jp-21.vcf", card(
    "BEGIN:VCARD", "VERSION:2.1",
    b"N;CHARSET=ISO-2022-JP;ENCODING=QUOTED-PRINTABLE:" + qp(enc("佐藤;花子;;;", jis)),
    b"FN;CHARSET=ISO-2022-JP:" + enc("佐藤 花子", jis),
    b"TITLE;CHARSET=ISO-2022-JP:" + enc("営業部長", jis),
    "TEL;WORK;VOICE:+81-3-5555-0202",
    "END:VCARD"))

# 4. EUC-JP, QUOTED-PRINTABLE.
write("eucjp-21.vcf", card(
    "BEGIN:VCARD", "VERSION:2.1",
    b"N;CHARSET=EUC-JP;ENCODING=QUOTED-PRINTABLE:" + qp(enc("高橋;健一;;;", "EUC-JP")),
    b"FN;CHARSET=EUC-JP;ENCODING=QUOTED-PRINTABLE:" + qp(enc("高橋 健一", "EUC-JP")),
    "TEL;CELL:080-5555-0303",
    "END:VCARD"))

# 5. Chinese: GB2312-labelled GBK bytes (喆 is not in GB2312), and raw GB18030 with a 4-byte character.
write("gb18030-21.vcf", card(
    "BEGIN:VCARD", "VERSION:2.1",
    b"N;CHARSET=GB2312;ENCODING=QUOTED-PRINTABLE:" + qp(enc("王;喆;;;", "GBK")),
    b"FN;CHARSET=GB2312;ENCODING=QUOTED-PRINTABLE:" + qp(enc("王喆", "GBK")),
    "TEL;CELL:+86-138-5555-0404",
    "END:VCARD",
    "BEGIN:VCARD", "VERSION:2.1",
    b"N;CHARSET=GB18030:" + enc("李;娜;;;", "GB18030"),
    b"FN;CHARSET=GB18030:" + enc("李娜", "GB18030"),
    b"NOTE;CHARSET=GB18030:" + enc("吉野家的𠮷字", "GB18030"),
    "END:VCARD"))

# 6. Big5, raw bytes: 許 is B3 5C (a backslash byte inside the character).
write("big5-21.vcf", card(
    "BEGIN:VCARD", "VERSION:2.1",
    b"N;CHARSET=BIG5:" + enc("許;志明;;;", "BIG5"),
    b"FN;CHARSET=BIG5:" + enc("許志明", "BIG5"),
    b"ADR;WORK;CHARSET=BIG5:;;" + enc("信義路五段7號;台北市;;110;台灣", "BIG5"),
    "TEL;WORK;VOICE:+886-2-5555-0505",
    "END:VCARD"))

# 7. EUC-KR (label) with QUOTED-PRINTABLE; the NOTE holds 똠, only in the UHC/CP949 superset.
write("euckr-21.vcf", card(
    "BEGIN:VCARD", "VERSION:2.1",
    b"N;CHARSET=EUC-KR;ENCODING=QUOTED-PRINTABLE:" + qp(enc("김;민준;;;", "EUC-KR")),
    b"FN;CHARSET=EUC-KR;ENCODING=QUOTED-PRINTABLE:" + qp(enc("김민준", "EUC-KR")),
    b"NOTE;CHARSET=EUC-KR;ENCODING=QUOTED-PRINTABLE:" + qp(enc("똠방각하 모임", "CP949")),
    "TEL;CELL:+82-10-5555-0606",
    "END:VCARD"))

# 8. KOI8-R raw, 9. windows-1251 QUOTED-PRINTABLE (Ukrainian letters).
write("koi8r-21.vcf", card(
    "BEGIN:VCARD", "VERSION:2.1",
    b"N;CHARSET=KOI8-R:" + enc("Петров;Иван;Сергеевич;;", "KOI8-R"),
    b"FN;CHARSET=KOI8-R:" + enc("Иван Петров", "KOI8-R"),
    "TEL;CELL:+7-916-555-0707",
    "END:VCARD"))
write("windows1251-21.vcf", card(
    "BEGIN:VCARD", "VERSION:2.1",
    b"N;CHARSET=WINDOWS-1251;ENCODING=QUOTED-PRINTABLE:" + qp(enc("Їжакевич;Ґанна;;;", "WINDOWS-1251")),
    b"FN;CHARSET=WINDOWS-1251;ENCODING=QUOTED-PRINTABLE:" + qp(enc("Ґанна Їжакевич", "WINDOWS-1251")),
    b"ORG;CHARSET=WINDOWS-1251:" + enc("Київська пекарня", "WINDOWS-1251"),
    "TEL;WORK:+380-44-555-0808",
    "END:VCARD"))

# 10. ISO-8859-1, -2 and -15 in one file (three cards).
write("iso8859-21.vcf", card(
    "BEGIN:VCARD", "VERSION:2.1",
    b"N;CHARSET=ISO-8859-1:" + enc("Müller;François;;;", "ISO-8859-1"),
    b"FN;CHARSET=ISO-8859-1;ENCODING=QUOTED-PRINTABLE:" + qp(enc("François Müller", "ISO-8859-1")),
    b"ADR;HOME;CHARSET=ISO-8859-1:;;" + enc("Øvre gate 5;Ålesund;;6002;Norge", "ISO-8859-1"),
    "END:VCARD",
    "BEGIN:VCARD", "VERSION:2.1",
    b"N;CHARSET=ISO-8859-2:" + enc("Šťastný;Zdeněk;;;", "ISO-8859-2"),
    b"FN;CHARSET=ISO-8859-2:" + enc("Zdeněk Šťastný", "ISO-8859-2"),
    b"NOTE;CHARSET=ISO-8859-2:" + enc("Łódź, Żółć", "ISO-8859-2"),
    "END:VCARD",
    "BEGIN:VCARD", "VERSION:2.1",
    b"N;CHARSET=ISO-8859-15:" + enc("Lefèvre;Œdipe;;;", "ISO-8859-15"),
    b"FN;CHARSET=ISO-8859-15:" + enc("Œdipe Lefèvre", "ISO-8859-15"),
    b"NOTE;CHARSET=ISO-8859-15;ENCODING=QUOTED-PRINTABLE:" + qp(enc("Dîner à 50 € chez Šárka", "ISO-8859-15")),
    "END:VCARD"))

# 11. A whole file in UTF-16LE with a byte order mark (Windows "Unicode" export).
text = card(
    "BEGIN:VCARD", "VERSION:2.1",
    "N:Adeyemi-Okafor;Zoë;;;",
    "FN:Zoë Adeyemi-Okafor 🎻",
    "TEL;CELL:+44 7700 900909",
    "NOTE;ENCODING=QUOTED-PRINTABLE:Cellist =E2=80=94 rehearsals on Tuesdays",
    "END:VCARD").decode()
write("utf16le-bom-21.vcf", b"\xff\xfe" + enc(text, "UTF-16LE"))

# 12. Encoded text values: Shift_JIS in BASE64, UTF-16 (with BOM) in QUOTED-PRINTABLE.
write("encoded-text-21.vcf", card(
    "BEGIN:VCARD", "VERSION:2.1",
    b"N;CHARSET=SHIFT_JIS;ENCODING=BASE64:" + base64.b64encode(enc("中村;美咲;;;", sj)),
    b"FN;CHARSET=SHIFT_JIS;ENCODING=BASE64:" + base64.b64encode(enc("中村 美咲", sj)),
    b"NOTE;CHARSET=UTF-16;ENCODING=QUOTED-PRINTABLE:" + qp(enc("Ünïcødé note ✓", "UTF-16")),
    "TEL;CELL:090-5555-1212",
    "END:VCARD"))

# 13. VERSION-less cards: one 2.1-shaped, one 3.0-shaped (LF line ends, as scripts write).
write("no-version-21-shape.vcf", (
    "BEGIN:VCARD\n"
    "N;ENCODING=QUOTED-PRINTABLE;CHARSET=UTF-8:Nowak;Agnieszka;;;\n"
    "FN:Agnieszka Nowak\n"
    "TEL;CELL:+48 600 555 131\n"
    "TEL;WORK;FAX:+48 22 555 1313\n"
    "EMAIL;INTERNET:agnieszka.nowak@example.pl\n"
    "END:VCARD\n").encode())
write("no-version-30-shape.vcf", (
    "BEGIN:VCARD\n"
    "FN:Kwame Mensah\n"
    "N:Mensah;Kwame;;;\n"
    "TEL;TYPE=CELL:+233 20 555 1414\n"
    "EMAIL;TYPE=INTERNET,HOME:kwame@example.com.gh\n"
    "NOTE:Met at the Accra tech meetup\\, 2019\n"
    "END:VCARD\n").encode())

# 14. Continuation lines without the leading space (older iOS / Android exports).
write("continuation-unindented-30.vcf", card(
    "BEGIN:VCARD", "VERSION:3.0",
    "N:Okonkwo;Chiamaka;;;",
    "FN:Chiamaka Okonkwo",
    "NOTE:First line of the note",
    "Second line: still the note",
    "",
    "Fourth line after a blank one; Meeting at 10:30",
    "item1.ADR;type=HOME;type=pref:;;12 Allen Avenue",
    "Flat 3B;Ikeja;Lagos;100271;Nigeria",
    "item1.X-ABADR:ng",
    "TEL;type=CELL:+234 803 555 1515",
    "X-CUSTOM-FIELD;X-PARAM=kept:unknown value",
    "END:VCARD"))

# 15. Cards without FN: N only, ORG only, NICKNAME only, EMAIL only, TEL only, CJK N.
write("no-fn.vcf", card(
    "BEGIN:VCARD", "VERSION:3.0", "N:Doe;John;Quincy;Dr.;Jr.", "TEL;TYPE=CELL:+1 555 0100", "END:VCARD",
    "BEGIN:VCARD", "VERSION:2.1", "ORG:Acme Widgets;Sales", "TEL;WORK:+1 555 0101", "END:VCARD",
    "BEGIN:VCARD", "VERSION:3.0", "NICKNAME:Bex,Becky", "EMAIL:bex@example.org", "END:VCARD",
    "BEGIN:VCARD", "VERSION:2.1", "EMAIL;INTERNET:only.email@example.net", "END:VCARD",
    "BEGIN:VCARD", "VERSION:3.0", "TEL;TYPE=CELL:+1 555 0102", "X-UNKNOWN:kept", "END:VCARD",
    "BEGIN:VCARD", "VERSION:3.0", "N:山田;太郎;;;", "END:VCARD",
    "BEGIN:VCARD", "VERSION:3.0", "N:;;;;", "ORG:;", "EMAIL:fallback@example.com", "END:VCARD"))

# 16. FN with an unescaped comma (3.0) and a 2.1 one.
write("fn-comma.vcf", card(
    "BEGIN:VCARD", "VERSION:3.0", "FN:Doe, John", "N:Doe;John;;;", "UID:fn-comma-1", "END:VCARD",
    "BEGIN:VCARD", "VERSION:2.1", "FN:Smith, Jane", "N:Smith;Jane", "END:VCARD",
    "BEGIN:VCARD", "VERSION:4.0", "FN:García\\, María", "N:García;María;;;", "END:VCARD"))
