/// A word or a string on one line of a scenario file. Positions are offsets in the line's
/// Unicode scalars; ``ScenarioLine/column(_:)`` turns them into 1-based `Character` columns.
struct ScenarioToken: Sendable {
  /// The word as written, or a string's decoded value.
  var text: String
  /// Offset of the first scalar (the opening quote for a string).
  var start: Int
  /// Offset just past the last scalar (past the closing quote for a string).
  var end: Int
  var isString: Bool
  /// No white space between this token and the one before it (`title="x"`: the string is glued).
  var glued: Bool

  var isWord: Bool { !isString }

  /// Whether this is the bare word `word`.
  func `is`(_ word: String) -> Bool { !isString && text == word }
}

/// One line of a scenario file, lexed: its tokens, where its comment starts, whether it is
/// indented (a field line), and whether lexing failed (then it has been reported already).
///
/// A line keeps its text, its tokens and, when it is not ASCII, two offset maps, each sized by
/// the line itself: memory stays proportional to the file however long its longest line is.
/// It does not keep its scalars: the lexer reads them while they are decoded.
struct ScenarioLine: Sendable {
  /// 1-based.
  var number: Int
  /// The line as written, without its line ending.
  var text: String
  /// How many Unicode scalars `text` has.
  var scalarCount: Int
  var tokens: [ScenarioToken] = []
  /// Offset where the comment starts (or the end of the line).
  var contentEnd: Int
  /// Starts with a space or a tab.
  var indented: Bool
  /// A string was unterminated or had a bad escape; the line is not parsed further.
  var lexFailed = false
  /// Scalar offset → 0-based `Character` index, for lines with non-ASCII text; `nil` when every
  /// scalar is its own character.
  var _characterIndex: [Int32]?
  var _characterCount: Int
  /// Scalar offset → UTF-8 offset in `text` (one more entry for the end), for non-ASCII lines.
  var _utf8Offset: [Int32]?

  /// A line from its text (as written) and that text's scalars, which it reads but does not keep.
  /// A line is at most ``ScenarioInput/maxBytes`` long, so its offsets fit in 32 bits.
  init(number: Int, text: String, scalars: [Unicode.Scalar]) {
    self.number = number
    self.text = text
    self.scalarCount = scalars.count
    self.contentEnd = scalars.count
    self.indented = scalars.first.map { $0 == " " || $0 == "\t" } ?? false
    if text.utf8.count == scalars.count {
      _characterCount = scalars.count
    } else {
      var map: [Int32] = []
      map.reserveCapacity(scalars.count)
      var count: Int32 = 0
      for ch in text {
        for _ in ch.unicodeScalars where map.count < scalars.count { map.append(count) }
        count += 1
      }
      // Defensive: the map must cover every scalar.
      while map.count < scalars.count { map.append(count) }
      _characterIndex = map
      _characterCount = Int(count)
      var utf8: [Int32] = []
      utf8.reserveCapacity(scalars.count + 1)
      utf8.append(0)
      var total: Int32 = 0
      for s in scalars {
        total += Int32(UTF8.width(s))
        utf8.append(total)
      }
      _utf8Offset = utf8
    }
  }

  /// The 1-based column of a scalar offset (offsets past the end count on, one per scalar).
  func column(_ offset: Int) -> Int {
    let o = max(0, offset)
    if o >= scalarCount { return _characterCount + (o - scalarCount) + 1 }
    guard let map = _characterIndex else { return o + 1 }
    return Int(map[o]) + 1
  }

  /// The text between two scalar offsets.
  func slice(_ from: Int, _ to: Int) -> String {
    let a = min(max(0, from), scalarCount)
    let b = min(max(a, to), scalarCount)
    let ua = _utf8Offset.map { Int($0[a]) } ?? a
    let ub = _utf8Offset.map { Int($0[b]) } ?? b
    let u = text.utf8
    return String(text[u.index(u.startIndex, offsetBy: ua)..<u.index(u.startIndex, offsetBy: ub)])
  }

  /// The line without its comment, trimmed of white space (an expectation's `text`): from its
  /// first token to its last, since everything else before the comment is white space.
  var trimmedContent: String {
    guard let first = tokens.first, let last = tokens.last else { return "" }
    return slice(first.start, last.end)
  }

  /// Offset just after the last token: where a missing word is reported.
  var endOfContent: Int { tokens.last.map { $0.end + 1 } ?? 0 }
}
