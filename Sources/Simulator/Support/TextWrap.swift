/// Greedy word wrap, shared by the pictures' labels and the tool's text reports.
package enum TextWrap {
  /// `text`'s words (split at spaces) in lines of at most `columns` characters; a word longer
  /// than a line (a path) gets a line of its own. No lines for text without a word.
  package static func greedy(_ text: String, columns: Int) -> [String] {
    var lines: [String] = []
    var line = ""
    for word in text.split(separator: " ", omittingEmptySubsequences: true) {
      if line.isEmpty {
        line = String(word)
      } else if line.count + 1 + word.count <= columns {
        line += " " + word
      } else {
        lines.append(line)
        line = String(word)
      }
    }
    if !line.isEmpty { lines.append(line) }
    return lines
  }
}
