import Foundation
import Scenarios
@_spi(Kernel) import Simulator

/// Reads the results files of `sim-cli report` (what `fuzz --out` writes) a piece at a time and a
/// line at a time, handing each record on with its line number and diagnosing every other line
/// as `FILE:LINE:COLUMN` — without keeping the file, and without trusting it: binary bytes, a
/// line of a gigabyte or nested a million deep cost a diagnostic, never a crash.
///
/// A blank line is skipped. The last line of a file, when it has no newline and stops inside a
/// value, is what a campaign stopped mid-write leaves (`kill -9`, a full disk): it is left out
/// with a note, as `fuzz --resume` cuts it off. Anything else that is not a record is an error.
struct ResultsReader {
  /// A record is about 600 bytes (a long `minimized` path adds its length); a line longer than
  /// this is not one, and is not kept in memory while it is skipped.
  static let maxLineBytes = 1 << 20
  /// Counts and tallies above this are not a campaign's (a seed has at most 100,000 intents);
  /// refusing them keeps every sum far from overflow.
  static let maxCount = 1_000_000_000

  /// What was found, errors and notes in file and line order.
  private(set) var diagnostics: [ReportDiagnostic] = []

  /// Whether any line was an error.
  var failed: Bool { diagnostics.contains { $0.severity == .error } }

  /// Reads the open descriptor `fd` to its end, calling `take` with each record and its line;
  /// `name` is how diagnostics name the file. Returns the number of records taken.
  @discardableResult
  mutating func read(fd: Int32, name: String, take: (FuzzRecord, Int) -> Void) -> Int {
    var lines = LineSplitter()
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    var records = 0
    var readError: String?
    while true {
      let n = buffer.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress!, $0.count) }
      if n < 0, errno == EINTR { continue }
      if n < 0 {
        readError = String(cString: strerror(errno))
        break
      }
      if n == 0 { break }
      for (bytes, number) in lines.feed(buffer[0..<n]) {
        if line(bytes, number: number, last: false, file: name, take: take) { records += 1 }
      }
    }
    if let readError {
      diagnostics.append(ReportDiagnostic(file: name, severity: .error, message: "cannot be read: \(readError)"))
    }
    if let (bytes, number) = lines.finish(), line(bytes, number: number, last: true, file: name, take: take) { records += 1 }
    return records
  }

  /// Splits bytes into lines, numbered from 1; a line longer than ``maxLineBytes`` is dropped as
  /// it comes (nil), and only its number kept.
  struct LineSplitter {
    private(set) var number = 0
    private var pending: [UInt8] = []
    private var overlong = false

    /// The lines `bytes` completes.
    mutating func feed(_ bytes: ArraySlice<UInt8>) -> [(ArraySlice<UInt8>?, Int)] {
      var lines: [(ArraySlice<UInt8>?, Int)] = []
      var start = bytes.startIndex
      while let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) {
        number += 1
        if overlong || pending.count + (newline - start) > ResultsReader.maxLineBytes {
          lines.append((nil, number))
        } else if pending.isEmpty {
          lines.append((bytes[start..<newline], number))
        } else {
          pending += bytes[start..<newline]
          lines.append((pending[...], number))
        }
        pending = []
        overlong = false
        start = newline + 1
      }
      if !overlong {
        if pending.count + (bytes.endIndex - start) > ResultsReader.maxLineBytes {
          overlong = true
          pending = []
        } else {
          pending += bytes[start...]
        }
      }
      return lines
    }

    /// The last line, when the input did not end with a newline.
    mutating func finish() -> (ArraySlice<UInt8>?, Int)? {
      guard overlong || !pending.isEmpty else { return nil }
      number += 1
      return (overlong ? nil : pending[...], number)
    }
  }

  private mutating func error(_ file: String, _ number: Int, column: Int? = nil, _ message: String) {
    diagnostics.append(ReportDiagnostic(file: file, line: number, column: column, severity: .error, message: message))
  }

  /// One line (nil: longer than ``maxLineBytes``); `last` for a final line without a newline.
  /// Returns whether it was a record (given to `take`).
  private mutating func line(_ bytes: ArraySlice<UInt8>?, number: Int, last: Bool, file: String, take: (FuzzRecord, Int) -> Void) -> Bool {
    guard var bytes else {
      error(file, number, "a line of more than \(Self.maxLineBytes / (1 << 20)) MiB, which no fuzz record is")
      return false
    }
    if bytes.last == UInt8(ascii: "\r") { bytes = bytes.dropLast() }  // written on Windows
    if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return false }
    if let bad = Self.firstInvalidUTF8(bytes) {
      let byte = String(bytes[bad], radix: 16, uppercase: true)
      error(
        file, number, column: Self.column(bytes, bad - bytes.startIndex),
        "byte 0x\(byte.count < 2 ? "0" : "")\(byte) is not UTF-8 text: not a fuzz record (is this a results file of 'sim-cli fuzz --out'?)")
      return false
    }
    // The common case first: a line that decodes as a record (never one nested deeper than a
    // record can be, which no decoder is given). Only a line that does not is scanned, to say
    // where it goes wrong.
    if Self.nesting(bytes) <= JSONSyntax.maxDepth, let record = try? FuzzRecord.decode(jsonLine: bytes), Self.outOfRange(record) == nil {
      take(record, number)
      return true
    }
    let keys: [(key: String, offset: Int)]
    do {
      keys = try JSONSyntax.check(bytes)
    } catch {
      if last && error.atEnd {
        diagnostics.append(
          ReportDiagnostic(
            file: file, line: number, severity: .note,
            message:
              "the last line stops in the middle of a record (a campaign stopped while writing it): left out; 'fuzz --resume' runs its seed again"
          ))
      } else {
        let joined =
          Self.holdsASecondRecord(bytes) || (error.atEnd && !last)
          ? " (a record cut short with another after it: a file whose last line was cut short, concatenated with another?)" : ""
        self.error(file, number, column: Self.column(bytes, error.offset), "not JSON: \(error.message)\(joined)")
      }
      return false
    }
    do {
      let record = try FuzzRecord.decode(jsonLine: bytes)
      if let problem = Self.outOfRange(record) {
        let column = keys.first { $0.key == problem.key }.map { Self.column(bytes, $0.offset) } ?? 1
        error(file, number, column: column, "not a fuzz record: \(problem.message)")
      }
    } catch let decoding as DecodingError {
      let (message, key) = Self.explain(decoding, keys: keys)
      let column = key.flatMap { name in keys.first { $0.key == name }.map { Self.column(bytes, $0.offset) } } ?? 1
      error(file, number, column: column, "not a fuzz record: \(message)")
    } catch {
      self.error(file, number, column: 1, "not a fuzz record: \(error)")
    }
    return false
  }

  /// How deep arrays and objects nest in `bytes` (brackets inside strings not counted): a quick
  /// pass before any decoder sees the line.
  static func nesting(_ bytes: ArraySlice<UInt8>) -> Int {
    var (depth, deepest, inString, escaped) = (0, 0, false, false)
    for byte in bytes {
      if inString {
        if escaped {
          escaped = false
        } else if byte == UInt8(ascii: "\\") {
          escaped = true
        } else if byte == UInt8(ascii: "\"") {
          inString = false
        }
        continue
      }
      switch byte {
      case UInt8(ascii: "\""): inString = true
      case UInt8(ascii: "["), UInt8(ascii: "{"):
        depth += 1
        deepest = max(deepest, depth)
      case UInt8(ascii: "]"), UInt8(ascii: "}"): depth -= 1
      default: break
      }
    }
    return deepest
  }

  /// Whether a record starts again after the line's first byte (`{"app":`, `{"convergedAfter":`
  /// or, in records of older versions, `{"counts":`).
  static func holdsASecondRecord(_ bytes: ArraySlice<UInt8>) -> Bool {
    let starts = ["{\"app\":", "{\"convergedAfter\":", "{\"counts\":"].map { Array($0.utf8) }
    var i = bytes.startIndex + 1
    while i < bytes.endIndex {
      if bytes[i] == UInt8(ascii: "{"), starts.contains(where: { bytes[i...].starts(with: $0) }) { return true }
      i += 1
    }
    return false
  }

  /// What a decoding error means for a record, and the top-level key it is about.
  static func explain(_ error: DecodingError, keys: [(key: String, offset: Int)]) -> (String, String?) {
    func expected(_ key: String) -> String {
      switch key {
      case "seed": "a whole number from 0 to \(UInt64.max)"
      case "violations": "a whole number"
      case "policy", "scenario", "traceHash": "a string"
      case "counts": "an object of whole numbers, one per kind"
      case "minimized": "a path or null"
      case "convergedAfter": "a duration such as \"5.2s\", \"never\" or null"
      case "app": "an object with applied, refusedAsExpected, refused and errors"
      case "wallMicroseconds": "a whole number of microseconds"
      default: "another value"
      }
    }
    switch error {
    case .keyNotFound(let key, let context):
      guard let top = context.codingPath.first?.stringValue else {
        let summary = keys.contains { $0.key == "failures" || $0.key == "signatures" }
        let hint =
          summary
          ? " (this is the summary 'fuzz --format json' prints; report reads the records 'fuzz --out FILE.jsonl' writes)" : ""
        return ("it has no \"\(key.stringValue)\" key\(hint)", nil)
      }
      return ("\"\(top)\" has no \"\(key.stringValue)\"", top)
    case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
      guard let top = context.codingPath.first?.stringValue else {
        return ("a record is a JSON object, one per line", nil)
      }
      return ("\"\(top)\" must be \(expected(top))", top)
    @unknown default:
      return ("\(error)", nil)
    }
  }

  /// A count, tally or time no campaign writes.
  static func outOfRange(_ record: FuzzRecord) -> (key: String, message: String)? {
    let limit = maxCount
    if record.violations < 0 || record.violations > limit { return ("violations", "\"violations\" must be from 0 to \(limit)") }
    if record.counts.contains(where: { $0 < 0 || $0 > limit }) { return ("counts", "each count must be from 0 to \(limit)") }
    if let app = record.app, [app.applied, app.refusedAsExpected, app.refused, app.errors].contains(where: { $0 < 0 || $0 > limit }) {
      return ("app", "each of \"app\"'s tallies must be from 0 to \(limit)")
    }
    if let d = record.convergedAfter, d.nanoseconds < 0 { return ("convergedAfter", "\"convergedAfter\" must not be negative") }
    // A seed of more than a day of wall time is not one of ours, and sums stay far from overflow.
    if let w = record.wallMicroseconds, w > 86_400_000_000 { return ("wallMicroseconds", "\"wallMicroseconds\" must be at most a day") }
    return nil
  }

  /// The offset of the first byte that does not belong to well-formed UTF-8, or of a NUL.
  static func firstInvalidUTF8(_ bytes: ArraySlice<UInt8>) -> Int? {
    var i = bytes.startIndex
    while i < bytes.endIndex {
      let b = bytes[i]
      if b == 0 { return i }
      if b < 0x80 {
        i += 1
        continue
      }
      let length: Int
      let minimum: UInt32
      switch b {
      case 0xC2...0xDF: (length, minimum) = (2, 0x80)
      case 0xE0...0xEF: (length, minimum) = (3, 0x800)
      case 0xF0...0xF4: (length, minimum) = (4, 0x10000)
      default: return i
      }
      guard i + length <= bytes.endIndex else { return i }
      var scalar = UInt32(b) & (0xFF >> (length + 1))
      for k in 1..<length {
        let c = bytes[i + k]
        guard c & 0xC0 == 0x80 else { return i }
        scalar = scalar << 6 | UInt32(c & 0x3F)
      }
      if scalar < minimum || scalar > 0x10FFFF || (0xD800...0xDFFF).contains(scalar) { return i }
      i += length
    }
    return nil
  }

  /// The 1-based column of the byte `offset` bytes into the line, counting characters.
  static func column(_ bytes: ArraySlice<UInt8>, _ offset: Int) -> Int {
    let end = bytes.startIndex + min(max(offset, 0), bytes.count)
    return bytes[bytes.startIndex..<end].reduce(1) { $1 & 0xC0 == 0x80 ? $0 : $0 + 1 }
  }
}
