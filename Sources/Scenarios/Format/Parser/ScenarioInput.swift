/// How a scenario file's bytes become lines: the size limit, the line endings, the byte-order
/// mark, and UTF-8 decoding, one line at a time so that nothing is sized by the longest line.
enum ScenarioInput {
  /// The largest scenario file (or text) accepted: 16 MiB of UTF-8.
  static let maxBytes = 16 * 1_024 * 1_024

  /// Why a file is refused: `the file is 17.2 MB (17200000 bytes); scenario files are limited
  /// to 16 MiB (16777216 bytes)`. `byteCount` is `nil` when the size is unknown (a pipe).
  static func tooLargeMessage(byteCount: Int?) -> String {
    let limit = "scenario files are limited to 16 MiB (\(maxBytes) bytes)"
    guard let byteCount else { return "the file is larger than 16 MiB; " + limit }
    let tenths = (byteCount + 50_000) / 100_000
    return "the file is \(tenths / 10).\(tenths % 10) MB (\(byteCount) bytes); " + limit
  }

  /// Calls `body` with each line's number (from 1) and bytes: split at `\n`, one `\r` before
  /// it (or at the end of the input) dropped, a leading UTF-8 byte-order mark dropped. An empty
  /// input is one empty line; a final line ending does not start another line. Returns whether
  /// the input has any `\n`.
  @discardableResult
  static func forEachLine(_ bytes: UnsafeBufferPointer<UInt8>, _ body: (Int, UnsafeBufferPointer<UInt8>) -> Void) -> Bool {
    var start = 0
    if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { start = 3 }
    var number = 0
    var sawNewline = false
    func emit(_ from: Int, _ to: Int) {
      var end = to
      if end > from, bytes[end - 1] == 0x0D { end -= 1 }
      number += 1
      body(number, UnsafeBufferPointer(rebasing: bytes[from..<end]))
    }
    var i = start
    while i < bytes.count {
      if bytes[i] == 0x0A {
        sawNewline = true
        emit(start, i)
        start = i + 1
      }
      i += 1
    }
    if start < bytes.count || number == 0 { emit(start, bytes.count) }
    return sawNewline
  }

  /// About how many lines of `bytes` the parser keeps (line 1, and every line with anything
  /// but white space before a `#`), so that the lines are stored without growing.
  static func keptLineCount(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
    var count = 1
    var decided = false
    for b in bytes {
      if b == 0x0A {
        decided = false
      } else if !decided, b != 0x20, b != 0x09, b != 0x0D {
        decided = true
        if b != UInt8(ascii: "#") { count += 1 }
      }
    }
    return count
  }

  /// One line decoded: its text and where its first invalid UTF-8 sequence was (a scalar
  /// offset; that sequence is U+FFFD in `text` and in the scalars).
  struct DecodedLine {
    var text: String
    var firstInvalid: Int?
  }

  /// Decodes a line's bytes into `scalars` (emptied first, its capacity kept: it is scratch
  /// space shared by every line). Each maximal invalid sequence becomes one U+FFFD, as
  /// `String(decoding:as:)` does.
  static func decode(_ bytes: UnsafeBufferPointer<UInt8>, into scalars: inout [Unicode.Scalar]) -> DecodedLine {
    scalars.removeAll(keepingCapacity: true)
    if !bytes.contains(where: { $0 >= 0x80 }) {
      for b in bytes { scalars.append(Unicode.Scalar(b)) }
      return DecodedLine(text: String(decoding: bytes, as: UTF8.self))
    }
    var parser = Unicode.UTF8.ForwardParser()
    var iterator = bytes.makeIterator()
    var firstInvalid: Int?
    var utf8Count = 0
    decoding: while true {
      switch parser.parseScalar(from: &iterator) {
      case .valid(let encoded):
        let scalar = Unicode.UTF8.decode(encoded)
        utf8Count += UTF8.width(scalar)
        scalars.append(scalar)
      case .error:
        if firstInvalid == nil { firstInvalid = scalars.count }
        utf8Count += 3
        scalars.append("\u{FFFD}")
      case .emptyInput:
        break decoding
      }
    }
    guard firstInvalid != nil else { return DecodedLine(text: String(decoding: bytes, as: UTF8.self)) }
    var text = ""
    text.reserveCapacity(utf8Count)
    text.unicodeScalars.append(contentsOf: scalars)
    return DecodedLine(text: text, firstInvalid: firstInvalid)
  }

  /// The start of the first line of `bytes` (at most 1,000 bytes of it), decoded: the line
  /// shown with a diagnostic about the whole file, which is not read further.
  static func firstLine(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
    let start = bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF ? 3 : 0
    var end = start
    while end < bytes.count, end - start < 1_000, bytes[end] != 0x0A { end += 1 }
    if end < bytes.count, bytes[end] != 0x0A {
      // Cut short: end on a scalar boundary.
      while end > start, bytes[end] & 0xC0 == 0x80 { end -= 1 }
    } else if end > start, bytes[end - 1] == 0x0D {
      end -= 1
    }
    return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
  }
}
