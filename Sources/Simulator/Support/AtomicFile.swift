import Foundation

/// Writes files so that a reader never sees half of one: the text goes to a temporary file in
/// the same folder, which is then renamed over the destination.
package enum AtomicFile {
  package struct WriteError: Error, CustomStringConvertible {
    package var path: String
    package var reason: String
    package var description: String { "cannot write '\(path)': \(reason)" }
  }

  package static func write(_ text: String, to path: String) throws(WriteError) {
    let url = URL(fileURLWithPath: path)
    let folder = url.deletingLastPathComponent()
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory), isDirectory.boolValue else {
      throw WriteError(path: path, reason: "the folder '\(folder.path)' does not exist")
    }
    let temporary = folder.appendingPathComponent(".\(url.lastPathComponent).partial-\(ProcessInfo.processInfo.processIdentifier)")
    do {
      try Data(text.utf8).write(to: temporary)
      // rename(2) replaces the destination atomically.
      guard rename(temporary.path, url.path) == 0 else {
        throw WriteError(path: path, reason: String(cString: strerror(errno)))
      }
    } catch let error as WriteError {
      try? FileManager.default.removeItem(at: temporary)
      throw error
    } catch {
      try? FileManager.default.removeItem(at: temporary)
      throw WriteError(path: path, reason: "\(error.localizedDescription)")
    }
  }
}
