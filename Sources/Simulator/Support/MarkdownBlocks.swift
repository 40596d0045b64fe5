/// The fenced code blocks of a Markdown document, for the package's tests that hold the README
/// and the guides to the files and output they show.
package enum MarkdownBlocks {
  /// The fenced blocks of the section that starts with the line `heading` (`## Your own sync
  /// engine`) and ends at the next `## ` heading: each block's language (after the backticks;
  /// empty when none) and its text without a final newline. Nil when there is no such section.
  package static func inSection(_ heading: String, of document: String) -> [(language: String, text: String)]? {
    guard let start = document.range(of: "\n\(heading)\n") else { return nil }
    let rest = document[start.upperBound...]
    let section = rest.range(of: "\n## ").map { rest[..<$0.lowerBound] } ?? rest
    var result: [(language: String, text: String)] = []
    var current: (language: String, lines: [Substring])?
    for line in section.split(separator: "\n", omittingEmptySubsequences: false) {
      if line.hasPrefix("```") {
        if let block = current {
          result.append((block.language, block.lines.joined(separator: "\n")))
          current = nil
        } else {
          current = (String(line.dropFirst(3)), [])
        }
      } else if current != nil {
        current!.lines.append(line)
      }
    }
    return result
  }
}
