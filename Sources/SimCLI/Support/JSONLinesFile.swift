import Foundation
import Scenarios
@_spi(Kernel) import Simulator

/// A JSON Lines results file that is appended to line by line, each line written with one
/// `write(2)` as soon as it is ready. Opening it for resume reads the records already there
/// and cuts off a torn last line (a campaign killed mid-write).
final class JSONLinesFile: @unchecked Sendable {
  struct OpenError: Error, CustomStringConvertible {
    var description: String
  }

  private let handle: FileHandle
  private(set) var existing: [FuzzRecord] = []

  init(path: String, resume: Bool) throws {
    let fm = FileManager.default
    if resume, fm.fileExists(atPath: path) {
      let data = fm.contents(atPath: path) ?? Data()
      var goodLength = 0
      var offset = 0
      for line in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
        let end = offset + line.count
        defer { offset = end + 1 }
        if line.isEmpty { continue }
        guard end < data.count,  // a line without its newline is torn
          let record = try? FuzzRecord.decode(jsonLine: line)
        else { break }
        existing.append(record)
        goodLength = end + 1
      }
      guard let h = FileHandle(forUpdatingAtPath: path) else { throw OpenError(description: "cannot open '\(path)' to resume") }
      try h.truncate(atOffset: UInt64(goodLength))
      try h.seekToEnd()
      handle = h
    } else {
      if fm.fileExists(atPath: path), !resume {
        let size = (try? fm.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        if size > 0 {
          throw OpenError(description: "'\(path)' already exists; add --resume to continue it, or remove it")
        }
      }
      guard fm.createFile(atPath: path, contents: nil), let h = FileHandle(forWritingAtPath: path) else {
        throw OpenError(description: "cannot create '\(path)'")
      }
      handle = h
    }
  }

  func append(_ line: String) {
    handle.write(Data((line + "\n").utf8))
  }

  deinit { try? handle.close() }
}
