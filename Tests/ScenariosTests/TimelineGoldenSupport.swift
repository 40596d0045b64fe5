import Foundation
import Testing

/// Golden files in `Tests/ScenariosTests/Golden/`, read next to this source file. Run with
/// `RECORD_GOLDEN=1` to write them again from the current output.
enum Golden {
  static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden")

  static var recording: Bool { ProcessInfo.processInfo.environment["RECORD_GOLDEN"] == "1" }

  /// Compares `actual` with the golden file `name`, or records it.
  static func check(_ actual: String, named name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let url = folder.appendingPathComponent(name)
    if recording {
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
      try Data(actual.utf8).write(to: url)
      return
    }
    guard let data = FileManager.default.contents(atPath: url.path) else {
      Issue.record("no golden file \(name); record it with RECORD_GOLDEN=1 swift test --filter \(name)", sourceLocation: sourceLocation)
      return
    }
    let expected = String(decoding: data, as: UTF8.self)
    guard expected != actual else { return }
    let e = expected.split(separator: "\n", omittingEmptySubsequences: false)
    let a = actual.split(separator: "\n", omittingEmptySubsequences: false)
    let line = (0..<min(e.count, a.count)).first { e[$0] != a[$0] } ?? min(e.count, a.count)
    Issue.record(
      """
      \(name) differs from the golden file at line \(line + 1):
      − \(line < e.count ? e[line] : "(end of file)")
      + \(line < a.count ? a[line] : "(end of output)")
      If the change is intended, re-record with: RECORD_GOLDEN=1 swift test --filter Timeline
      """, sourceLocation: sourceLocation)
  }
}
