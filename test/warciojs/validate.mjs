// validate.mjs reads WARC files with warcio.js, a WARC library Trawler
// does not use or share code with, so that the Go tests in this directory
// can check Trawler's WARCs against a reader nobody here wrote.
//
//   node validate.mjs WARCIO_PREFIX FILE.warc.gz...
//
// WARCIO_PREFIX is the npm prefix warcio was installed into
// (scripts/install-test-deps.sh: .cache/warcio). For each file it prints,
// as one JSON document on stdout:
//   - every record as warcio.js's WARCParser reads it: offset, length, the
//     header fields the tests need, and its checks (see checkRecord);
//   - the CDXJ index warcio.js's own CDXIndexer writes for the file.
// The Go test decides what passes; this script only reports. It exits
// non-zero only when it cannot run at all.
import { createReadStream, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, join, resolve } from "node:path";

const [prefix, ...files] = process.argv.slice(2);
if (!prefix || files.length === 0) {
  console.error("usage: node validate.mjs WARCIO_PREFIX FILE.warc.gz...");
  process.exit(2);
}
// warcio is installed outside node's search path (a git-ignored cache), so
// it is loaded through a require rooted in that prefix: its package
// "exports" map then picks the public entry point.
const require = createRequire(resolve(prefix, "package.json"));
const {
  AsyncIterReader,
  CDXIndexer,
  DEFAULT_CDX_FIELDS,
  StatusAndHeadersParser,
  WARCParser,
  WARCRecord,
  WARCSerializer,
} = require("warcio");
const warcioVersion = JSON.parse(
  readFileSync(join(prefix, "node_modules", "warcio", "package.json"), "utf8"),
).version;

// warcio.js reports some framing problems (a Content-Length too small,
// a record not followed by CRLF CRLF) only through console.warn; they are
// collected here and attached to the record being read.
let warnings = [];
for (const level of ["warn", "log"]) {
  console[level] = (...args) => warnings.push(args.map(String).join(" "));
}

// digestAlgos maps a WARC digest label to the algorithm names
// WARCSerializer accepts.
const digestAlgos = { sha1: "sha-1", "sha-256": "sha-256", sha256: "sha-256" };

// computeDigest has warcio.js digest chunks the way its WARCSerializer
// digests a record it writes: a resource record (no HTTP header) over the
// bytes, whose block digest is then read back. The label and encoding
// (base32 or hex) follow the header value being checked.
async function computeDigest(headerValue, chunks) {
  const [label, value = ""] = headerValue.split(/:(.*)/s);
  const algo = digestAlgos[label.toLowerCase()];
  if (!algo) {
    return { unchecked: `algorithm ${label} is not one warcio.js computes` };
  }
  const hex = /^[0-9a-f]+$/i.test(value) && (value.length === 40 || value.length === 64);
  const rec = await WARCRecord.create({ type: "resource", url: "urn:x-trawler:digest" }, chunks);
  const ser = new WARCSerializer(rec, {
    digest: { algo, prefix: `${label}:`, base32: !hex },
  });
  await ser.digestRecord();
  return { computed: rec.warcBlockDigest };
}

async function readAll(reader) {
  const parts = [];
  for await (const chunk of reader) {
    parts.push(chunk);
  }
  return parts;
}

const byteLength = (chunks) => chunks.reduce((n, c) => n + c.length, 0);

function isChunked(headers) {
  const te = headers.get("transfer-encoding") || "";
  return te.split(",").map((s) => s.trim().toLowerCase()).includes("chunked");
}

// checkRecord reads one record's block whole (raw: the parser was told not
// to parse HTTP, so the block is exactly Content-Length bytes) and checks:
//   - the version line is WARC/1.0 or WARC/1.1 and the fields every record
//     needs are there;
//   - the block has Content-Length bytes (the file is not cut short);
//   - WARC-Block-Digest over the block;
//   - for application/http blocks, the HTTP header parses (with warcio's
//     StatusAndHeadersParser) and, for a chunked body, the chunk framing
//     (warcio's de-chunking reader) is whole;
//   - WARC-Payload-Digest: over the HTTP entity with the transfer coding
//     removed and any content coding kept (WARC 1.1's payload), or over
//     the block for records whose block has no further structure. A revisit
//     holds no payload, so its payload digest is left for the Go test to
//     compare with the record it refers to.
async function checkRecord(record) {
  const h = record.warcHeaders.headers;
  const out = {
    version: record.warcHeaders.statusline,
    type: record.warcType || "",
    id: h.get("WARC-Record-ID") || "",
    uri: record.warcTargetURI || "",
    date: record.warcDate || "",
    contentType: record.warcContentType || "",
    contentLength: record.warcContentLength,
    blockDigest: h.get("WARC-Block-Digest") || "",
    payloadDigest: h.get("WARC-Payload-Digest") || "",
    profile: h.get("WARC-Profile") || "",
    refersTo: h.get("WARC-Refers-To") || "",
    refersToURI: record.warcRefersToTargetURI || "",
    refersToDate: record.warcRefersToDate || "",
    concurrentTo: record.warcConcurrentTo,
    // Every WARC-Protocol value, however many fields carry them
    // (iipc/warc-specifications issue 42): warcio.js's parser joins
    // repeated fields with ", ", and splits them again as it does for
    // WARC-Concurrent-To.
    protocols: (h.get("WARC-Protocol") || "").split(",").map((s) => s.trim()).filter((s) => s),
    problems: [],
  };
  if (!/^WARC\/1\.[01]$/.test(out.version)) {
    out.problems.push(`version line ${JSON.stringify(out.version)}`);
  }
  for (const name of ["WARC-Record-ID", "WARC-Date", "WARC-Type", "Content-Length"]) {
    if (!h.get(name)) {
      out.problems.push(`no ${name}`);
    }
  }
  const block = await readAll(record.reader);
  out.blockBytes = byteLength(block);
  if (out.blockBytes !== out.contentLength) {
    out.problems.push(`block has ${out.blockBytes} bytes, Content-Length ${out.contentLength}`);
  }
  if (out.blockDigest) {
    Object.assign(out, prefixed("block", await computeDigest(out.blockDigest, block)));
  } else if (out.type !== "warcinfo") {
    out.problems.push("no WARC-Block-Digest");
  }

  let payload = block;
  if (/^application\/http/i.test(out.contentType) && out.blockBytes > 0) {
    const reader = new AsyncIterReader(block, null);
    const http = await new StatusAndHeadersParser().parse(reader, { headersClass: Headers });
    if (!http) {
      out.problems.push("HTTP header does not parse");
    } else if (out.type === "request") {
      out.httpMethod = http.method || "";
    } else {
      out.httpProto = http.protocol || "";
      out.httpStatus = Number(http.statusCode) || 0;
      if (!(out.httpStatus >= 100 && out.httpStatus <= 999)) {
        out.problems.push(`HTTP status line ${JSON.stringify(http.statusline)}`);
      }
    }
    if (http) {
      const body = isChunked(http.headers) ? new AsyncIterReader(reader, null, true) : reader;
      payload = await readAll(body);
      if (body.errored) {
        out.problems.push("chunked body framing is broken");
      }
    }
  }
  if (!out.payloadDigest) {
    out.payloadCheck = "absent";
  } else if (out.type === "revisit") {
    // The payload is not in the record: a revisit repeats the payload
    // digest of the record it refers to (WARC 1.1, revisit records).
    out.payloadCheck = "revisit: no payload in the record, compare with the record it refers to";
  } else {
    Object.assign(out, prefixed("payload", await computeDigest(out.payloadDigest, payload)));
    out.payloadCheck = out.payloadComputed ? "checked" : out.payloadUnchecked;
  }
  return out;
}

function prefixed(which, result) {
  return Object.fromEntries(
    Object.entries(result).map(([k, v]) => [which + k[0].toUpperCase() + k.slice(1), v]),
  );
}

async function validateFile(path) {
  const result = { path, records: [], cdxj: [], errors: [] };
  warnings = [];
  try {
    const parser = new WARCParser(createReadStream(path), { parseHttp: false });
    for await (const record of parser) {
      // What warcio.js warned of while moving to this record concerns the
      // end of the one before.
      const before = warnings.map((w) => `after the previous record: ${w}`);
      warnings = [];
      const rec = await checkRecord(record);
      rec.offset = parser.offset;
      rec.problems.push(...before, ...warnings);
      warnings = [];
      result.records.push(rec);
    }
    result.errors.push(...warnings.map((w) => `after the last record: ${w}`));
  } catch (e) {
    result.errors.push(`WARCParser: ${e && e.stack ? e.stack : e}`);
  }
  try {
    warnings = [];
    // The standard CDXJ fields, plus the HTTP Location header: warcio.js's
    // CDXJ has no redirect field of its own to compare Trawler's with.
    const indexer = new CDXIndexer({
      format: "cdxj",
      fields: [...DEFAULT_CDX_FIELDS, "http:location"],
    });
    const files = [{ filename: basename(path), reader: createReadStream(path) }];
    for await (const line of indexer.iterIndex(files)) {
      result.cdxj.push(indexer.serialize(line).trimEnd());
    }
    result.errors.push(...warnings.map((w) => `CDXIndexer: ${w}`));
  } catch (e) {
    result.errors.push(`CDXIndexer: ${e && e.stack ? e.stack : e}`);
  }
  return result;
}

const report = { warcio: warcioVersion, node: process.version, files: [] };
for (const path of files) {
  report.files.push(await validateFile(path));
}
process.stdout.write(JSON.stringify(report) + "\n");
