#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets: corpus_image/ and corpus_cli/ next to this script.

    python3 tests/fuzz/make_corpus.py [--add]

Needs Pillow built with libtiff and libwebp (Debian: python3-pil) and, for the TIFF layouts only
Pillow does not write (tiles, planes, BigTIFF), tiffcp (Debian: libtiff-tools); the tests never run
it. The files are committed; run this again only to change them (it rewrites both folders; with
--add it only writes the seeds that are missing, leaving the others as they are: another Pillow
version encodes some of the older seeds differently, which would change them for nothing). Every
image seed starts with the harness's selector byte: 0x00 = the name "fuzz.png", 0x01 = "fuzz.tga"
(the name is what enables the TGA decoder). CLI seeds are arguments, each terminated by a NUL.
"""
import io
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
PNG_NAME, TGA_NAME = b"\x00", b"\x01"


# ---- pictures ---------------------------------------------------------------------------------

def picture(mode, w, h):
    """A small picture with gradients and an edge, so the encoders have something to code."""
    rgb = Image.new("RGB", (w, h))
    px = rgb.load()
    for y in range(h):
        for x in range(w):
            r = (x * 255) // max(w - 1, 1)
            g = (y * 255) // max(h - 1, 1)
            b = 220 if (x - w // 2) ** 2 + (y - h // 2) ** 2 < (min(w, h) // 3) ** 2 else 30
            px[x, y] = (r, g, (b + x * y) % 256)
    if mode == "RGB":
        return rgb
    if mode == "RGBA":
        im = rgb.convert("RGBA")
        im.putalpha(Image.linear_gradient("L").resize((w, h)))
        return im
    if mode == "LA":
        im = rgb.convert("LA")
        im.putalpha(Image.linear_gradient("L").rotate(90).resize((w, h)))
        return im
    if mode == "P":
        return rgb.quantize(colors=16)
    if mode == "CMYK":
        return rgb.convert("CMYK")
    return rgb.convert(mode)


def encode(im, fmt, **kw):
    buf = io.BytesIO()
    im.save(buf, fmt, **kw)
    return buf.getvalue()


# ---- PNG by hand (bit depths, interlacing, filters, chunk layouts Pillow does not write) -------

def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def ihdr(w, h, depth, ctype, interlace=0):
    return chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, ctype, 0, 0, interlace))


PNG_SIG = b"\x89PNG\r\n\x1a\n"
CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


def sample_rows(w, h, depth, ctype):
    """Raw (unfiltered) scanlines of a gradient, packed at `depth` bits per sample."""
    ch = CHANNELS[ctype]
    maxv = (1 << depth) - 1
    rows = []
    for y in range(h):
        vals = [((x * 7 + y * 13 + c * 29) * maxv // 97) % (maxv + 1)
                for x in range(w) for c in range(ch)]
        if depth == 16:
            rows.append(b"".join(struct.pack(">H", v) for v in vals))
        elif depth == 8:
            rows.append(bytes(vals))
        else:
            per = 8 // depth
            out = bytearray()
            for i in range(0, len(vals), per):
                byte = 0
                for j in range(per):
                    v = vals[i + j] if i + j < len(vals) else 0
                    byte |= v << (8 - depth * (j + 1))
                out.append(byte)
            rows.append(bytes(out))
    return rows


def filt(row, prev, bpp, kind):
    """PNG filter `kind` (0..4) of one scanline."""
    out = bytearray([kind])
    for i, x in enumerate(row):
        a = row[i - bpp] if i >= bpp else 0
        b = prev[i] if prev else 0
        c = prev[i - bpp] if prev and i >= bpp else 0
        if kind == 0:
            p = 0
        elif kind == 1:
            p = a
        elif kind == 2:
            p = b
        elif kind == 3:
            p = (a + b) // 2
        else:
            pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
            p = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
        out.append((x - p) & 0xFF)
    return bytes(out)


def png_manual(w, h, depth, ctype, interlace=0, filters=(0,), idat_split=0, extra=b"",
               palette=None):
    ch = CHANNELS[ctype]
    bpp = max(1, ch * depth // 8)
    raw = b""
    if interlace:
        # Adam7: pass origins and steps
        passes = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4),
                  (1, 0, 2, 2), (0, 1, 1, 2)]
        full = [[((x * 7 + y * 13 + c * 29) * ((1 << depth) - 1) // 97) % (1 << depth)
                  for x in range(w) for c in range(ch)] for y in range(h)]
        assert depth in (8, 16)
        for (x0, y0, dx, dy) in passes:
            prev = None
            for y in range(y0, h, dy):
                vals = []
                for x in range(x0, w, dx):
                    vals += full[y][x * ch:(x + 1) * ch]
                if not vals:
                    continue
                row = (b"".join(struct.pack(">H", v) for v in vals) if depth == 16
                       else bytes(vals))
                raw += filt(row, prev, bpp, filters[y % len(filters)])
                prev = row
    else:
        prev = None
        for y, row in enumerate(sample_rows(w, h, depth, ctype)):
            raw += filt(row, prev, bpp, filters[y % len(filters)])
            prev = row
    z = zlib.compress(raw, 9)
    out = PNG_SIG + ihdr(w, h, depth, ctype, interlace) + extra
    if palette is not None:
        out += chunk(b"PLTE", palette)
    if idat_split:
        for i in range(0, len(z), idat_split):
            out += chunk(b"IDAT", z[i:i + idat_split])
    else:
        out += chunk(b"IDAT", z)
    return out + chunk(b"IEND", b"")


def png_cgbi(w, h):
    """Apple's iPhone PNG: CgBI chunk first, raw deflate (no zlib header), BGRA order."""
    rows = sample_rows(w, h, 8, 6)
    raw = b"".join(b"\x00" + r for r in rows)
    co = zlib.compressobj(9, zlib.DEFLATED, -15)
    z = co.compress(raw) + co.flush()
    return (PNG_SIG + chunk(b"CgBI", b"\x50\x00\x20\x02") + ihdr(w, h, 8, 6) + chunk(b"IDAT", z)
            + chunk(b"IEND", b""))


def png_header_only(w, h, depth=8, ctype=2):
    return PNG_SIG + ihdr(w, h, depth, ctype) + chunk(b"IEND", b"")


# ---- BMP by hand ------------------------------------------------------------------------------

def bmp_manual(w, h, bpp, top_down=False, compression=0, masks=None, palette=None, data=None,
               header_size=40):
    stride = ((w * bpp + 31) // 32) * 4
    if data is None:
        rows = []
        for y in range(h):
            row = bytearray()
            if bpp >= 8:
                for x in range(w):
                    v = (x * 17 + y * 31) & 0xFF
                    if bpp == 8:
                        row.append(v % 16)
                    elif bpp == 16:
                        row += struct.pack("<H", (x << 11 | y << 5 | (x + y)) & 0xFFFF)
                    elif bpp == 24:
                        row += bytes([v, 255 - v, (x * y) & 0xFF])
                    else:
                        row += bytes([v, 255 - v, (x * y) & 0xFF, (x * 8) & 0xFF])
            else:
                per = 8 // bpp
                for x in range(0, w, per):
                    byte = 0
                    for j in range(per):
                        byte |= (((x + j) * 3 + y) % (1 << bpp)) << (8 - bpp * (j + 1))
                    row.append(byte)
            rows.append(bytes(row).ljust(stride, b"\x00"))
        data = b"".join(rows if top_down else rows[::-1])
    pal = b""
    if palette is None and bpp <= 8:
        n = 1 << bpp
        pal = b"".join(bytes([(i * 255) // (n - 1), (i * 97) & 0xFF, 255 - (i * 255) // (n - 1), 0])
                       for i in range(n))
    elif palette is not None:
        pal = palette
    mask_bytes = b"".join(struct.pack("<I", m) for m in masks) if masks else b""
    info = struct.pack("<IiiHHIIiiII", header_size, w, -h if top_down else h, 1, bpp, compression,
                       len(data), 2835, 2835, len(pal) // 4, 0)
    if header_size > 40:  # V4/V5: the masks are part of the header
        info += (mask_bytes + b"\x00" * 4 * (4 - len(masks or ()))
                 + b"BGRs").ljust(header_size - 40, b"\x00")
        mask_bytes = b""
    off = 14 + header_size + len(mask_bytes) + len(pal)
    return b"BM" + struct.pack("<IHHI", off + len(data), 0, 0, off) + info + mask_bytes + pal + data


# ---- TGA by hand ------------------------------------------------------------------------------

def tga_manual(w, h, bpp, kind=2, top_down=False, rle=False):
    bytes_pp = (bpp + 7) // 8
    desc = (0x20 if top_down else 0) | (1 if bpp == 16 else (8 if bpp == 32 else 0))
    hdr = struct.pack("<BBBHHBHHHHBB", 0, 0, kind | (8 if rle else 0), 0, 0, 0, 0, 0, w, h, bpp,
                      desc)
    px = [bytes(((x * 11 + y * 5 + c * 40) & 0xFF) for c in range(bytes_pp))
          for y in range(h) for x in range(w)]
    if not rle:
        return hdr + b"".join(px)
    out = bytearray()
    i = 0
    while i < len(px):  # alternate run packets and raw packets
        if (i // 7) % 2 == 0:
            n = min(5, len(px) - i)
            out.append(0x80 | (n - 1))
            out += px[i]
        else:
            n = min(6, len(px) - i)
            out.append(n - 1)
            out += b"".join(px[i:i + n])
        i += n
    return hdr + bytes(out)


# ---- the image corpus -------------------------------------------------------------------------

# ---- TIFF by hand, tiffcp, WebP and EXIF -------------------------------------------------------

def tiff_manual(w, h, spp=3, big_endian=False, orientation=0, data=None, entries=None,
                next_ifd=0):
    """An uncompressed 8-bit TIFF, one strip: little-endian with the pixels first, big-endian with
    the directory first. `entries` replaces or adds directory entries, {tag: (type, count, value)},
    or removes them ({tag: None})."""
    e = ">" if big_endian else "<"
    if data is None:
        data = bytes((x * 37 + y * 11 + c * 80) & 0xFF for y in range(h) for x in range(w)
                     for c in range(spp))
    fields = {256: (4, 1, w), 257: (4, 1, h), 258: (3, spp, 8), 259: (3, 1, 1),
              262: (3, 1, 2 if spp >= 3 else 1), 273: (4, 1, 0), 277: (3, 1, spp),
              278: (4, 1, h), 279: (4, 1, len(data)), 284: (3, 1, 1)}
    if orientation:
        fields[274] = (3, 1, orientation)
    if spp == 4:
        fields[338] = (3, 1, 2)  # unassociated alpha
    fields.update(entries or {})
    fields = {k: v for k, v in fields.items() if v is not None}
    n = len(fields)
    ifd_bytes = 2 + 12 * n + 4
    extra = b""  # out-of-line values, after the directory
    if big_endian:
        ifd, pix = 8, None
    else:
        pix, ifd = 8, 8 + len(data) + (len(data) & 1)
    extra_at = ifd + ifd_bytes
    body = b""
    for tag in sorted(fields):
        kind, count, value = fields[tag]
        if tag == 258 and count > 1:  # bits per sample, one per sample
            body += struct.pack(e + "HHII", tag, kind, count, extra_at + len(extra))
            extra += struct.pack(e + "H", value) * count
            continue
        if kind == 3 and count == 1:
            field = struct.pack(e + "HH", value, 0)
        else:
            field = struct.pack(e + "I", value)
        body += struct.pack(e + "HHI", tag, kind, count) + field
    if big_endian:
        pix = extra_at + len(extra)
    # the strip offset, now that it is known (unless an entry set it)
    if (entries or {}).get(273) is None:
        at = sorted(fields).index(273) * 12 + 8
        body = body[:at] + struct.pack(e + "I", pix) + body[at + 4:]
    directory = struct.pack(e + "H", n) + body + struct.pack(e + "I", next_ifd) + extra
    head = (b"MM\x00\x2a" if big_endian else b"II\x2a\x00") + struct.pack(e + "I", ifd)
    if big_endian:
        return head + directory + data
    return head + data + b"\x00" * (len(data) & 1) + directory


def tiffcp(tiff, *options):
    """tiff rewritten by libtiff's tiffcp (Debian's libtiff-tools) with options; None without it."""
    if not shutil.which("tiffcp"):
        return None
    with tempfile.TemporaryDirectory() as d:
        src, dst = os.path.join(d, "in.tif"), os.path.join(d, "out.tif")
        with open(src, "wb") as f:
            f.write(tiff)
        subprocess.run(["tiffcp", "-s"] + list(options) + [src, dst], check=True,
                       stderr=subprocess.DEVNULL)
        with open(dst, "rb") as f:
            return f.read()


def exif_app1(orientation, big_endian=False, ifd_offset=8, count=1, kind=3, tag=0x0112):
    """A JPEG APP1 EXIF segment whose IFD0 holds one entry (Orientation, a SHORT)."""
    e = ">" if big_endian else "<"
    tiff = ((b"MM\x00\x2a" if big_endian else b"II\x2a\x00") + struct.pack(e + "I", ifd_offset) +
            struct.pack(e + "H", 1) + struct.pack(e + "HHI", tag, kind, count) +
            struct.pack(e + "HH", orientation, 0) + struct.pack(e + "I", 0))
    body = b"Exif\x00\x00" + tiff
    return b"\xff\xe1" + struct.pack(">H", len(body) + 2) + body


def with_segment(jpeg, segment):
    """The JPEG with `segment` right after its SOI."""
    return jpeg[:2] + segment + jpeg[2:]


def image_seeds():
    s = {}
    W, H = 13, 11  # odd sizes: partial MCUs, padded BMP rows, partial bytes
    # PNG
    s["png-gray8"] = PNG_NAME + encode(picture("L", W, H), "PNG")
    s["png-gray16"] = PNG_NAME + encode(picture("L", W, H).convert("I;16"), "PNG")
    s["png-graya8"] = PNG_NAME + encode(picture("LA", W, H), "PNG")
    s["png-rgb8"] = PNG_NAME + encode(picture("RGB", W, H), "PNG")
    s["png-rgba8"] = PNG_NAME + encode(picture("RGBA", W, H), "PNG")
    s["png-palette"] = PNG_NAME + encode(picture("P", W, H), "PNG")
    pal = picture("P", W, H)
    s["png-palette-trns"] = PNG_NAME + encode(pal, "PNG", transparency=3)
    s["png-gray1"] = PNG_NAME + encode(picture("1", W, H), "PNG")
    s["png-gray2"] = PNG_NAME + png_manual(W, H, 2, 0)
    s["png-gray4-trns"] = PNG_NAME + png_manual(W, H, 4, 0, extra=chunk(b"tRNS", b"\x00\x05"))
    s["png-graya16"] = PNG_NAME + png_manual(W, H, 16, 4)
    s["png-rgb16"] = PNG_NAME + png_manual(W, H, 16, 2)
    s["png-gray8-trns"] = PNG_NAME + png_manual(W, H, 8, 0, extra=chunk(b"tRNS", b"\x00\x20"))
    s["png-rgb8-trns"] = PNG_NAME + png_manual(W, H, 8, 2,
                                               extra=chunk(b"tRNS", b"\x00\x01\x00\x02\x00\x03"))
    s["png-rgb16-trns"] = PNG_NAME + png_manual(W, H, 16, 2,
                                                extra=chunk(b"tRNS", b"\x00\x01\x00\x02\x00\x03"))
    s["png-rgba16"] = PNG_NAME + png_manual(W, H, 16, 6)
    s["png-rgb8-filters"] = PNG_NAME + png_manual(W, H, 8, 2, filters=(0, 1, 2, 3, 4))
    s["png-rgba8-interlaced"] = PNG_NAME + png_manual(W, H, 8, 6, interlace=1,
                                                      filters=(4, 3, 2, 1, 0))
    s["png-gray16-interlaced"] = PNG_NAME + png_manual(W, H, 16, 0, interlace=1, filters=(1, 4))
    s["png-rgb8-multi-idat"] = PNG_NAME + png_manual(W, H, 8, 2, idat_split=37,
                                                     extra=chunk(b"tEXt", b"Comment\x00fuzz"))
    s["png-palette4"] = PNG_NAME + png_manual(
        W, H, 4, 3, palette=bytes(range(48)), extra=b"")
    s["png-cgbi"] = PNG_NAME + png_cgbi(W, H)
    s["png-1x1"] = PNG_NAME + encode(picture("RGB", 1, 1), "PNG")
    # JPEG
    s["jpeg-gray-baseline"] = PNG_NAME + encode(picture("L", 19, 13), "JPEG", quality=80)
    s["jpeg-rgb-baseline-420"] = PNG_NAME + encode(picture("RGB", 19, 13), "JPEG", quality=75)
    s["jpeg-rgb-baseline-444"] = PNG_NAME + encode(picture("RGB", 19, 13), "JPEG", quality=90,
                                                   subsampling=0)
    s["jpeg-rgb-baseline-422"] = PNG_NAME + encode(picture("RGB", 19, 13), "JPEG", quality=60,
                                                   subsampling=1)
    s["jpeg-rgb-progressive"] = PNG_NAME + encode(picture("RGB", 19, 13), "JPEG", quality=75,
                                                  progressive=True)
    s["jpeg-gray-progressive"] = PNG_NAME + encode(picture("L", 19, 13), "JPEG", quality=75,
                                                   progressive=True)
    s["jpeg-rgb-optimized"] = PNG_NAME + encode(picture("RGB", 19, 13), "JPEG", quality=50,
                                                optimize=True)
    s["jpeg-rgb-restart"] = PNG_NAME + encode(picture("RGB", 40, 24), "JPEG", quality=50,
                                              restart_marker_blocks=1)
    s["jpeg-cmyk"] = PNG_NAME + encode(picture("CMYK", 19, 13), "JPEG", quality=70)
    # BMP
    s["bmp-rgb24"] = PNG_NAME + encode(picture("RGB", W, H), "BMP")
    s["bmp-rgba32"] = PNG_NAME + encode(picture("RGBA", W, H), "BMP")
    s["bmp-pal8"] = PNG_NAME + encode(picture("P", W, H), "BMP")
    s["bmp-pal1"] = PNG_NAME + encode(picture("1", W, H), "BMP")
    s["bmp-rgb24-topdown"] = PNG_NAME + bmp_manual(W, H, 24, top_down=True)
    s["bmp-rgb32-topdown"] = PNG_NAME + bmp_manual(W, H, 32, top_down=True)
    s["bmp-pal4"] = PNG_NAME + bmp_manual(W, H, 4)
    s["bmp-rgb16-555"] = PNG_NAME + bmp_manual(W, H, 16)
    s["bmp-rgb16-565-bitfields"] = PNG_NAME + bmp_manual(W, H, 16, compression=3,
                                                         masks=(0xF800, 0x07E0, 0x001F))
    s["bmp-argb32-v5"] = PNG_NAME + bmp_manual(W, H, 32, compression=3,
                                               masks=(0xFF0000, 0xFF00, 0xFF, 0xFF000000),
                                               header_size=124)
    s["bmp-rle8"] = PNG_NAME + bmp_manual(4, 2, 8, compression=1,
                                          data=b"\x04\x01\x00\x00\x04\x02\x00\x01")
    # TGA (name byte 0x01)
    s["tga-rgb24"] = TGA_NAME + encode(picture("RGB", W, H), "TGA")
    s["tga-rgba32"] = TGA_NAME + encode(picture("RGBA", W, H), "TGA")
    s["tga-gray8"] = TGA_NAME + encode(picture("L", W, H), "TGA")
    s["tga-colormap"] = TGA_NAME + encode(picture("P", W, H), "TGA")
    s["tga-rgb24-rle"] = TGA_NAME + encode(picture("RGB", W, H), "TGA", compression="tga_rle")
    s["tga-rgba32-rle"] = TGA_NAME + encode(picture("RGBA", W, H), "TGA", compression="tga_rle")
    s["tga-gray8-rle"] = TGA_NAME + encode(picture("L", W, H), "TGA", compression="tga_rle")
    s["tga-colormap-rle"] = TGA_NAME + encode(picture("P", W, H), "TGA", compression="tga_rle")
    s["tga-rgb16"] = TGA_NAME + tga_manual(W, H, 16)
    s["tga-rgb24-topdown"] = TGA_NAME + tga_manual(W, H, 24, top_down=True)
    s["tga-rgba32-rle-manual"] = TGA_NAME + tga_manual(W, H, 32, rle=True)
    s["tga-gray8-rle-manual"] = TGA_NAME + tga_manual(W, H, 8, kind=3, rle=True)
    # PNM
    s["pnm-p5"] = PNG_NAME + encode(picture("L", W, H), "PPM")
    s["pnm-p6"] = PNG_NAME + encode(picture("RGB", W, H), "PPM")
    s["pnm-p5-16bit"] = PNG_NAME + b"P5\n%d %d\n65535\n" % (W, H) + b"".join(
        struct.pack(">H", (i * 977) & 0xFFFF) for i in range(W * H))
    s["pnm-p6-comments"] = PNG_NAME + b"P6\n# a comment\n%d # width\n%d\n#\n255\n" % (W, H) + bytes(
        (i * 7) & 0xFF for i in range(W * H * 3))
    s["pnm-p5-maxval15"] = PNG_NAME + b"P5 %d %d 15\n" % (W, H) + bytes(i % 16 for i in range(W * H))

    # TIFF (libtiff): Pillow's writer, tiffcp's layouts, by hand
    s["tiff-rgb-raw"] = PNG_NAME + encode(picture("RGB", W, H), "TIFF")
    s["tiff-rgb-lzw"] = PNG_NAME + encode(picture("RGB", W, H), "TIFF", compression="tiff_lzw")
    s["tiff-rgb-deflate"] = PNG_NAME + encode(picture("RGB", W, H), "TIFF",
                                              compression="tiff_adobe_deflate")
    s["tiff-rgb-packbits"] = PNG_NAME + encode(picture("RGB", W, H), "TIFF",
                                               compression="packbits")
    s["tiff-rgb-jpeg"] = PNG_NAME + encode(picture("RGB", 19, 13), "TIFF", compression="jpeg")
    s["tiff-gray8"] = PNG_NAME + encode(picture("L", W, H), "TIFF")
    s["tiff-gray16"] = PNG_NAME + encode(picture("L", W, H).convert("I;16"), "TIFF")
    s["tiff-rgba-unassociated"] = PNG_NAME + encode(picture("RGBA", W, H), "TIFF")
    s["tiff-graya"] = PNG_NAME + encode(picture("LA", W, H), "TIFF")
    s["tiff-palette"] = PNG_NAME + encode(picture("P", W, H), "TIFF")
    s["tiff-bilevel-g4"] = PNG_NAME + encode(picture("1", 40, 24), "TIFF", compression="group4")
    s["tiff-cmyk"] = PNG_NAME + encode(picture("CMYK", W, H), "TIFF")
    s["tiff-multipage"] = PNG_NAME + encode(picture("RGB", W, H), "TIFF", save_all=True,
                                            append_images=[picture("L", 7, 5)])
    for o in (2, 5, 6, 8):
        s["tiff-orientation-%d" % o] = PNG_NAME + encode(picture("RGB", W, H), "TIFF",
                                                         tiffinfo={274: o})
    s["tiff-manual-le"] = PNG_NAME + tiff_manual(W, H)
    s["tiff-manual-be-gray"] = PNG_NAME + tiff_manual(W, H, spp=1, big_endian=True)
    s["tiff-manual-be-rgba-orient7"] = PNG_NAME + tiff_manual(7, 5, spp=4, big_endian=True,
                                                              orientation=7)
    raw = encode(picture("RGB", 20, 18), "TIFF")
    for name, options in [("tiff-tiled-16", ["-t", "-w", "16", "-l", "16"]),
                          ("tiff-planar-separate", ["-p", "separate"]),
                          ("tiff-lzw-predictor", ["-c", "lzw:2"]),
                          ("tiff-zip-predictor-tiled",
                           ["-c", "zip:2", "-t", "-w", "16", "-l", "16"]),
                          ("tiff-bigtiff", ["-8"]),
                          ("tiff-rows-per-strip-3", ["-r", "3"])]:
        t = tiffcp(raw, *options)
        if t is None:
            print("make_corpus.py: tiffcp (libtiff-tools) is missing: %s not written" % name)
        else:
            s[name] = PNG_NAME + t
    # WebP (libwebp)
    s["webp-lossless-rgb"] = PNG_NAME + encode(picture("RGB", W, H), "WEBP", lossless=True)
    s["webp-lossless-rgba"] = PNG_NAME + encode(picture("RGBA", W, H), "WEBP", lossless=True,
                                                exact=True)
    s["webp-lossy-rgb"] = PNG_NAME + encode(picture("RGB", 19, 13), "WEBP", quality=70)
    s["webp-lossy-alpha"] = PNG_NAME + encode(picture("RGBA", 19, 13), "WEBP", quality=70)
    s["webp-extended-exif"] = PNG_NAME + encode(picture("RGB", W, H), "WEBP", quality=70,
                                                exif=exif_app1(6)[10:])
    s["webp-animated"] = PNG_NAME + encode(picture("RGB", W, H), "WEBP", save_all=True,
                                           append_images=[picture("L", W, H).convert("RGB")],
                                           lossless=True)
    # JPEG with an EXIF orientation (the JPEG itself is stb's)
    base = encode(picture("RGB", 19, 13), "JPEG", quality=75)
    for o in range(2, 9):
        s["jpeg-exif-orientation-%d" % o] = PNG_NAME + with_segment(base, exif_app1(o))
    s["jpeg-exif-orientation-6-mm"] = PNG_NAME + with_segment(base, exif_app1(6, big_endian=True))
    s["jpeg-exif-pillow"] = PNG_NAME + encode(picture("RGB", 19, 13), "JPEG", quality=75,
                                              exif=b"Exif\x00\x00" + exif_app1(8)[10:])

    # crafted: TIFF, WebP, EXIF
    s["bad-tiff-ifd-past-end"] = PNG_NAME + b"II*\x00" + struct.pack("<I", 0xFFFFFF00) + b"\x00" * 8
    s["bad-tiff-strip-past-end"] = PNG_NAME + tiff_manual(W, H, entries={273: (4, 1, 1 << 20)})
    s["bad-tiff-no-width"] = PNG_NAME + tiff_manual(W, H, entries={256: None})
    s["bad-tiff-60000x60000"] = PNG_NAME + tiff_manual(W, H, entries={256: (4, 1, 60000),
                                                                      257: (4, 1, 60000)})
    s["bad-tiff-0x0"] = PNG_NAME + tiff_manual(W, H, entries={256: (4, 1, 0), 257: (4, 1, 0)})
    s["bad-tiff-bits-7"] = PNG_NAME + tiff_manual(W, H, entries={258: (3, 3, 7)})
    s["bad-tiff-compression-unknown"] = PNG_NAME + tiff_manual(W, H, entries={259: (3, 1, 12345)})
    s["bad-tiff-compression-lzw-garbage"] = PNG_NAME + tiff_manual(W, H, entries={259: (3, 1, 5)})
    s["bad-tiff-photometric-77"] = PNG_NAME + tiff_manual(W, H, entries={262: (3, 1, 77)})
    s["bad-tiff-spp-0"] = PNG_NAME + tiff_manual(W, H, entries={277: (3, 1, 0)})
    s["bad-tiff-rows-per-strip-0"] = PNG_NAME + tiff_manual(W, H, entries={278: (4, 1, 0)})
    s["bad-tiff-next-ifd-loop"] = PNG_NAME + tiff_manual(W, H, next_ifd=8 + W * H * 3 + 1)
    s["bad-tiff-strip-count-huge"] = PNG_NAME + tiff_manual(W, H, entries={279: (4, 1, 0xFFFFFFF0)})
    s["bad-tiff-bigtiff-header-only"] = (PNG_NAME + b"II+\x00\x08\x00\x00\x00" + b"\x10" +
                                         b"\x00" * 7)
    webp = s["webp-lossless-rgb"][1:]
    s["bad-webp-riff-size-huge"] = PNG_NAME + webp[:4] + struct.pack("<I", 0x7FFFFFF0) + webp[8:]
    s["bad-webp-chunk-past-end"] = PNG_NAME + webp[:16] + struct.pack("<I", 0x10000) + webp[20:]
    s["bad-webp-first-chunk-unknown"] = PNG_NAME + webp[:12] + b"ABCD" + webp[16:]
    s["bad-webp-vp8l-no-signature"] = PNG_NAME + webp[:20] + b"\x00" + webp[21:]
    s["bad-webp-vp8l-16384x16384"] = PNG_NAME + webp[:21] + b"\xff\xff\xff\x0f" + webp[25:]
    s["bad-webp-vp8x-only"] = PNG_NAME + (b"RIFF" + struct.pack("<I", 22) + b"WEBPVP8X" +
                                          struct.pack("<I", 10) + b"\x00" * 4 +
                                          b"\x0c\x00\x00\x0a\x00\x00")
    lossy = s["webp-lossy-rgb"][1:]
    s["bad-webp-vp8-garbage"] = PNG_NAME + lossy[:30] + bytes(len(lossy) - 30)
    for name, seg in [("ifd-past-end", exif_app1(6, ifd_offset=0xFFF0)),
                      ("count-huge", exif_app1(6, count=0x7FFFFFFF)),
                      ("type-long", exif_app1(6, kind=4)),
                      ("orientation-9", exif_app1(9)),
                      ("orientation-0", exif_app1(0)),
                      ("bigtiff-magic", exif_app1(6)[:12] + b"\x2b" + exif_app1(6)[13:]),
                      ("segment-cut", exif_app1(6)[:4] + b"Exif\x00\x00II")]:
        data = with_segment(base, seg)
        if name == "segment-cut":  # a segment length that says 12 bytes
            data = base[:2] + b"\xff\xe1\x00\x0c" + b"Exif\x00\x00II*\x00" + base[2:]
        s["bad-jpeg-exif-" + name] = PNG_NAME + data

    # crafted: sizes
    s["bad-png-100000x100000"] = PNG_NAME + png_header_only(100000, 100000)
    s["bad-png-2049x2048-over-cap"] = PNG_NAME + png_header_only(2049, 2048)
    s["bad-png-0x0"] = PNG_NAME + png_header_only(0, 0)
    s["bad-png-0x5"] = PNG_NAME + png_header_only(0, 5)
    s["bad-png-2147483647x1"] = PNG_NAME + png_header_only(0x7FFFFFFF, 1)
    s["bad-png-high-bit-width"] = PNG_NAME + png_header_only(0x80000010, 16)
    s["bad-png-ihdr-not-first"] = PNG_NAME + PNG_SIG + chunk(b"tEXt", b"a\x00b") + ihdr(4, 4, 8, 2)
    s["bad-png-depth-3"] = PNG_NAME + png_header_only(4, 4, depth=3, ctype=0)
    s["bad-png-palette-no-plte"] = PNG_NAME + png_manual(4, 4, 8, 3)
    s["bad-png-idat-garbage"] = PNG_NAME + PNG_SIG + ihdr(4, 4, 8, 2) + chunk(b"IDAT", b"\x78\x9c" +
                                                                              b"\xff" * 20)
    s["bad-jpeg-0x0"] = PNG_NAME + bytes.fromhex(
        "ffd8ffc0000b080000000001011100ffd9")
    s["bad-jpeg-65535x65535"] = PNG_NAME + bytes.fromhex(
        "ffd8ffc0000b08ffffffff01011100ffd9")
    s["bad-bmp-0x0"] = PNG_NAME + bmp_manual(0, 0, 24, data=b"")
    s["bad-bmp-100000x100000"] = PNG_NAME + bmp_manual(100000, 100000, 24, data=b"\x00" * 16)
    s["bad-bmp-topdown-int-min"] = PNG_NAME + bytearray(bmp_manual(2, 2, 24))
    b = bytearray(s["bad-bmp-topdown-int-min"])
    b[1 + 22:1 + 26] = struct.pack("<i", -2 ** 31)
    s["bad-bmp-topdown-int-min"] = bytes(b)
    bmp = bytearray(bmp_manual(W, H, 24))
    bmp[2:6] = struct.pack("<I", len(bmp) + 1000)
    s["bad-bmp-declared-size-too-large"] = PNG_NAME + bytes(bmp)
    bmp = bytearray(bmp_manual(W, H, 24))
    bmp[10:14] = struct.pack("<I", 0xFFFFFFF0)
    s["bad-bmp-data-offset-huge"] = PNG_NAME + bytes(bmp)
    s["bad-tga-0x0"] = TGA_NAME + tga_manual(0, 0, 24)
    s["bad-tga-65535x65535"] = TGA_NAME + tga_manual(0, 0, 24)[:12] + struct.pack("<HH", 65535,
                                                                                    65535) + b"\x18\x00"
    s["bad-tga-bpp-7"] = TGA_NAME + tga_manual(2, 2, 24)[:16] + b"\x07\x00" + b"\x00" * 12
    s["bad-pnm-0x0"] = PNG_NAME + b"P5\n0 0\n255\n"
    s["bad-pnm-huge"] = PNG_NAME + b"P6\n100000000 100000000\n255\n\x00\x00\x00"
    s["bad-pnm-maxval-0"] = PNG_NAME + b"P5\n2 2\n0\n\x00\x00\x00\x00"
    s["bad-pnm-maxval-70000"] = PNG_NAME + b"P5\n2 2\n70000\n" + b"\x00" * 8
    s["bad-pnm-no-size"] = PNG_NAME + b"P6\n# nothing else"
    # crafted: not images, wrong names, nothing at all
    s["bad-text"] = PNG_NAME + b"hello, this is a text file, not an image\n"
    s["bad-text-named-tga"] = TGA_NAME + b"hello, this is a text file, not an image\n"
    s["bad-png-named-tga"] = TGA_NAME + s["png-rgb8"][1:]
    s["bad-empty-file"] = PNG_NAME
    s["bad-empty-file-named-tga"] = TGA_NAME
    s["bad-empty-input"] = b""
    s["bad-signature-only-png"] = PNG_NAME + PNG_SIG
    s["bad-signature-only-jpeg"] = PNG_NAME + b"\xff\xd8\xff"
    s["bad-signature-only-bmp"] = PNG_NAME + b"BM"
    s["bad-signature-only-pnm"] = PNG_NAME + b"P6"
    jpeg = s["jpeg-rgb-baseline-420"]
    s["bad-jpeg-no-eoi"] = jpeg[:-2]
    # crafted: truncations of the valid files
    for name in ["png-rgb8", "png-rgba8-interlaced", "png-gray16", "jpeg-rgb-baseline-420",
                 "jpeg-rgb-progressive", "bmp-rgb24", "bmp-rgba32", "bmp-rgb24-topdown",
                 "tga-rgb24", "tga-rgb24-rle", "tga-colormap", "tga-rgba32-rle-manual",
                 "tga-gray8-rle-manual", "pnm-p5", "pnm-p6", "pnm-p5-16bit", "tiff-rgb-raw",
                 "tiff-rgb-lzw", "tiff-gray16", "tiff-manual-be-gray", "webp-lossless-rgb",
                 "webp-lossy-rgb", "webp-lossy-alpha", "jpeg-exif-orientation-6"]:
        data = s[name]
        s["trunc-half-" + name] = data[:1 + (len(data) - 1) // 2]
        s["trunc-header-" + name] = data[:1 + 20]
        s["trunc-last-byte-" + name] = data[:-1]
    return s


# ---- the command-line corpus ------------------------------------------------------------------

def cli_seeds():
    A = []
    add = A.append
    img = "photo.png"
    # commands, help and version
    for args in ([], ["segment"], ["eigs", img], ["eigs"], ["affinity"], ["affinity", img],
                 ["bench"], ["devices"], ["help"], ["help", "segment"], ["help", "bogus"],
                 ["--help"], ["-h"], ["--version"], ["-V"], ["segment", "--help"],
                 ["bench", "-h"], ["devices", "--version"], ["bogus"], ["-x"], ["--bogus"],
                 ["--"], ["--", img], ["-"], ["segment", "-"], [""], ["segment", ""]):
        add(args)
    # every option with a good value, in a command that takes it
    good = [
        ["segment", img, "-k", "5"], ["segment", img, "-k5"], ["segment", img, "--k", "3"],
        ["segment", img, "--k=3"], ["segment", img, "-o", "out"], ["eigs", img, "--output=res"],
        ["segment", img, "--nev", "12", "-k", "10"], ["eigs", img, "--ncv", "40"],
        ["segment", img, "-k", "2,4,8"], ["segment", img, "-k", "4,2", "-k", "3"],
        ["contours", img], ["contours", img, "--parts", "-o", "edges"],
        ["contours", img, "--resize", "32x24", "--matvec", "cpu", "-q"],
        ["segment", img, "--affinity", "contour", "--grouping", "hierarchy", "-k", "2,3,20"],
        ["segment", img, "--affinity", "contour+color", "--sigma-c", "0.2"],
        ["segment", img, "--grouping", "hierarchy", "--spectral-weight", "0", "--min-region",
         "10", "-k", "30"],
        ["segment", img, "--tol", "1e-6"], ["eigs", img, "--max-iter", "300"],
        ["affinity", img, "--radius", "10"], ["segment", img, "--sigma-i", "0.05"],
        ["segment", img, "--sigma-x", "2.5"], ["segment", img, "--affinity", "color"],
        ["segment", img, "--affinity=colour"], ["eigs", img, "--affinity", "intensity"],
        ["segment", img, "--matvec", "cpu"], ["eigs", img, "--matvec", "opencl"],
        ["segment", img, "--matvec", "auto"], ["segment", img, "--solver", "lanczos"],
        ["eigs", img, "--solver", "arpack"], ["bench", "--solver", "all"],
        ["bench", "--kernel", "naive,aligned,vector"], ["bench", "--kernel", "image,auto,local"],
        ["segment", img, "--cl-device", "0"],
        ["eigs", img, "--cl-device", "NVIDIA"], ["segment", img, "--kernel", "aligned"],
        ["segment", img, "--kernel", "naive"], ["segment", img, "--kernel", "local"],
        ["segment", img, "--kernel", "vector"], ["segment", img, "--kernel", "image"],
        ["segment", img, "--kernel", "auto"], ["segment", img, "--local-size", "256"],
        ["segment", img, "--kernel-dir", "kernels"], ["segment", img, "--cl-max-alloc", "1048576"],
        ["segment", img, "--seed", "42"], ["segment", img, "--restarts", "3"],
        ["segment", img, "--resize", "640x480"], ["affinity", img, "--resize", "64X48"],
        ["affinity", img, "--export", "matrix2"], ["segment", img, "--keep-specks"],
        ["eigs", img, "--json", "-"], ["segment", img, "--json", "report.json"],
        ["segment", img, "--max-pixels", "1000000"], ["segment", img, "-q"],
        ["affinity", "--quiet", img],
        ["bench", "--size", "64x64", "--size", "128x96"], ["bench", "a.png", "b.jpg"],
        ["bench", "--repeat", "5", "--spmv-only"], ["bench", "--csv", "b.csv", "--chart", "b.svg"],
        ["bench", "--matvec", "all", "--kernel", "all"], ["bench", "--nev", "4", "--tol", "1e-2"],
        ["bench", "--ncv", "20", "--nev", "4"], ["devices", "--cl-device", "1", "--json", "-"],
        ["segment", "--", "-image-with-dash.png"],
        ["segment", img, "-k", "6", "--nev", "10", "--ncv", "24", "--tol", "1e-4", "--max-iter",
         "500", "--radius", "4", "--sigma-i", "0.2", "--sigma-x", "3", "--affinity", "color",
         "--matvec", "cpu", "--seed", "7", "--restarts", "2", "--resize", "32x24", "-o", "o",
         "--json", "r.json", "--max-pixels", "5000", "--keep-specks", "-q"],
    ]
    A += good
    # bad values, option by option
    bad = {
        "-k": ["0", "65", "-1", "abc", "", "5x", "9", "99999999999999999999", "2,x", "0,3",
               "3,3", "2,", ",2", "2,,3", "2,9", "2,65", "2," + "9" * 40],
        "-o": [""], "--nev": ["0", "1001", "1e3", "99999999999999999999"],
        "--ncv": ["1", "8", "4001"],
        "--tol": ["0", "1", "-1e-5", "nan", "inf", "-inf", "1e-400", "0x1p-10", " 1e-3", "1e-3 ",
                  "", "1e999"],
        "--max-iter": ["0", "2147483648", "-5"],
        "--radius": ["0", "31", "-1", "9223372036854775808", "-9223372036854775809", "5.5"],
        "--sigma-i": ["0", "-1", "nan", "inf", "1e-320", "abc", ""],
        "--sigma-x": ["0", "-0", "infinity", "1e308", "NAN(123)"],
        "--affinity": ["rgb", "", "COLOR"], "--matvec": ["all", "gpu", ""],
        "--kernel": ["all", "bogus", "", "naive,aligned"], "--local-size": ["0", "4097", "-1"],
        "--solver": ["all", "lobpcg", "", "ARPACK"],
        "--cl-max-alloc": ["0", "-5", "9223372036854775808"],
        "--seed": ["-1", "18446744073709551615", "0"], "--restarts": ["0", "1001"],
        "--resize": ["0x10", "10x0", "65537x1", "10x", "x10", "10x10x", "-5x5", "10*10", "",
                     "99999999999999999999x1", "1x99999999999999999999"],
        "--json": [""], "--max-pixels": ["0", "1073741824", "-1"],
        "--sigma-c": ["0", "-1", "nan", "inf"], "--grouping": ["bogus", "", "KMEANS"],
        "--spectral-weight": ["-1", "nan", "inf", "abc"],
        "--min-region": ["-3", "2147483648", "x"],
    }
    for opt, values in bad.items():
        for v in values:
            add(["segment", img, opt, v])
    for opt in ["--tol", "--nev", "-k", "-o", "--resize", "--json"]:
        add(["segment", img, opt])  # missing value
    add(["segment", img, "--tol="])
    add(["segment", img, "-k="])
    add(["affinity", img, "--export", ""])
    add(["affinity", img, "--export"])
    add(["bench", "--size", "0x0"])
    add(["bench"] + ["--size", "8x8"] * 17)
    add(["bench"] + ["img%d.png" % i for i in range(17)])
    add(["bench", "--repeat", "0"])
    add(["bench", "--repeat", "100001"])
    add(["bench", "--csv", ""])
    add(["bench", "--chart", ""])
    add(["bench", "--ncv", "16"])
    for v in ["naive,", ",", "naive,,aligned", "naive,bogus", "a" * 40 + ",naive", "naive," + "x" * 40,
              "auto,auto", "all,naive"]:
        add(["bench", "--kernel", v])
    add(["bench", "--kernel", "naive,vector", "--kernel", "all"])
    add(["bench", "--solver", "bogus"])
    # options in the wrong command, flags with values, unknown options
    for args in (["devices", "-k", "3"], ["eigs", img, "--seed", "1"], ["affinity", img, "-o", "x"],
                 ["bench", "-k", "3"], ["segment", img, "--export", "m"], ["eigs", img, "--size",
                 "8x8"], ["devices", "--max-pixels", "5"], ["segment", img, "--keep-specks=1"],
                 ["segment", img, "-qq"], ["segment", img, "--quiet=yes"], ["segment", img, "--=x"],
                 ["segment", img, "--"], ["segment", img, "-"], ["segment", img, "-z"],
                 ["segment", img, "--" + "x" * 100], ["segment", img, "--" + "x" * 100 + "=1"],
                 ["segment", "a.png", "b.png"], ["segment", "--", "a.png", "b.png"],
                 ["bench", "--", "a.png", "b.png"], ["segment", img, "-k", "9", "--help"],
                 ["segment", img, "--ncv", "5", "--version"], ["--quiet"], ["-k", "5"],
                 ["help", "segment", "extra"], ["segment", "-k", "3", "-k", "70"],
                 ["segment", img, "--nev", "4"], ["eigs", img, "--nev", "40", "--ncv", "40"],
                 ["contours"], ["contours", img, "--nev", "4"], ["contours", img, "-k", "3"],
                 ["contours", img, img], ["eigs", img, "--grouping", "hierarchy"],
                 ["segment", img, "--parts"], ["segment", img, "-k", "20", "--grouping", "kmeans"],
                 ["segment", img, "-k", "2,20", "--grouping", "hierarchy", "--grouping", "kmeans"]):
        add(args)
    return A


def write(folder, seeds, add=False):
    """Rewrites the folder with the seeds; with add, only writes the seeds it does not hold yet."""
    path = os.path.join(HERE, folder)
    if not add:
        shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path, exist_ok=True)
    for name, data in seeds.items():
        if add and os.path.exists(os.path.join(path, name)):
            continue
        with open(os.path.join(path, name), "wb") as f:
            f.write(data)


def main():
    add = "--add" in sys.argv[1:]
    images = image_seeds()
    big = {k: len(v) for k, v in images.items() if len(v) > 4096}
    assert not big, big
    write("corpus_image", images, add)
    cli = {}
    for args in cli_seeds():
        data = b"".join(a.encode() + b"\0" for a in args)
        name = "-".join(a.strip("-") or ("EMPTY" if not a else "DASH%d" % len(a))
                       for a in args)[:60] or "no-arguments"
        name = "".join(c if c.isalnum() or c in "-_.=" else "_" for c in name)
        base, i = name, 2
        while name in cli and cli[name] != data:
            name = "%s.%d" % (base, i)
            i += 1
        cli[name] = data
    write("corpus_cli", cli, add)
    print("corpus_image: %d files, corpus_cli: %d files" % (len(images), len(cli)))


if __name__ == "__main__":
    main()
