#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets: corpus_image/ and corpus_cli/ next to this script.

    python3 tests/fuzz/make_corpus.py        (needs Pillow: pip install pillow)

The files are committed; run this again only to change them (it rewrites both folders). Every
image seed starts with the harness's selector byte: 0x00 = the name "fuzz.png", 0x01 = "fuzz.tga"
(the name is what enables the TGA decoder). CLI seeds are arguments, each terminated by a NUL.
"""
import io
import os
import shutil
import struct
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
                 "tga-gray8-rle-manual", "pnm-p5", "pnm-p6", "pnm-p5-16bit"]:
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


def write(folder, seeds):
    path = os.path.join(HERE, folder)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    for name, data in seeds.items():
        with open(os.path.join(path, name), "wb") as f:
            f.write(data)


def main():
    images = image_seeds()
    big = {k: len(v) for k, v in images.items() if len(v) > 4096}
    assert not big, big
    write("corpus_image", images)
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
    write("corpus_cli", cli)
    print("corpus_image: %d files, corpus_cli: %d files" % (len(images), len(cli)))


if __name__ == "__main__":
    main()
