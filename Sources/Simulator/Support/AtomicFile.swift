import Foundation

/// Writes output files so that a reader never sees half of one and nothing that is not a plain
/// file gets replaced: a new or regular file is written to a temporary file in the same folder
/// and renamed over it; a symbolic link is followed (the link stays, its target is written that
/// way); anything else — a device, a FIFO — is written through, in place. `/dev/stdout`,
/// `/dev/stderr` and `/dev/fd/N` are the process's own open descriptors, written in order after
/// what the process already wrote there, whatever they are (a pipe, a terminal, a file).
package enum AtomicFile {
  /// The descriptor `path` names when it is one of the process's own streams, else nil.
  package static func ownDescriptor(_ path: String) -> Int32? {
    switch path {
    case "/dev/stdout": return STDOUT_FILENO
    case "/dev/stderr": return STDERR_FILENO
    default:
      for prefix in ["/dev/fd/", "/proc/self/fd/"] where path.hasPrefix(prefix) {
        guard let n = Int32(path.dropFirst(prefix.count)), n >= 0, fcntl(n, F_GETFD) != -1 else { return nil }
        return n
      }
      return nil
    }
  }

  /// Why a write failed: the path and the system's reason.
  package struct WriteError: Error, CustomStringConvertible {
    package var path: String
    package var reason: String
    package var description: String { "cannot write '\(path)': \(reason)" }
  }

  /// Why `path` can never be written — its folder is missing, it is a folder, it is a dangling
  /// link — or nil when a write may succeed. Commands ask before a long run, so a typo in an
  /// output path costs nothing; a write can still fail later (a full disk, a permission).
  package static func problem(writing path: String) -> String? {
    if ownDescriptor(path) != nil { return nil }
    // A relative path in a working directory that was removed: nothing can be made there (the
    // file would fail after the run), said before it.
    if !path.hasPrefix("/") {
      var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
      if getcwd(&buffer, buffer.count) == nil, errno == ENOENT { return "the working directory no longer exists (give a full path)" }
    }
    var info = stat()
    if lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFLNK, stat(path, &info) != 0 {
      return "it is a symbolic link to something that does not exist"
    }
    if stat(path, &info) == 0 { return info.st_mode & S_IFMT == S_IFDIR ? "it is a folder" : nil }
    let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory) else { return "the folder '\(folder)' does not exist" }
    return isDirectory.boolValue ? nil : "'\(folder)' is not a folder"
  }

  package static func write(_ text: String, to path: String) throws(WriteError) {
    if let fd = ownDescriptor(path) {
      if let reason = writeAll(text, to: fd) { throw WriteError(path: path, reason: reason) }
      return
    }
    var target = path
    var info = stat()
    if lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFLNK {
      // A link: write what it points to, and keep the link.
      guard let resolved = realpath(path, nil) else {
        throw WriteError(path: path, reason: "it is a symbolic link to something that does not exist (\(String(cString: strerror(errno))))")
      }
      target = String(cString: resolved)
      free(resolved)
    }
    if stat(target, &info) == 0 {
      switch info.st_mode & S_IFMT {
      case S_IFREG: break
      case S_IFDIR: throw WriteError(path: path, reason: "it is a folder")
      default: return try writeThrough(text, to: target, shownAs: path)
      }
    }
    try replace(text, at: target, shownAs: path)
  }

  /// Temporary file, then rename(2): readers see the old file or the new one, never half.
  static func replace(_ text: String, at path: String, shownAs shown: String) throws(WriteError) {
    let url = URL(fileURLWithPath: path)
    let folder = url.deletingLastPathComponent()
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory), isDirectory.boolValue else {
      throw WriteError(path: shown, reason: "the folder '\(folder.path)' does not exist")
    }
    let temporary = folder.appendingPathComponent(".\(url.lastPathComponent).partial-\(ProcessInfo.processInfo.processIdentifier)").path
    let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_EXCL, 0o644)
    guard fd >= 0 else { throw WriteError(path: shown, reason: String(cString: strerror(errno))) }
    if let reason = writeAll(text, to: fd) ?? (fsync(fd) == 0 ? nil : String(cString: strerror(errno))) {
      close(fd)
      unlink(temporary)
      throw WriteError(path: shown, reason: reason)
    }
    close(fd)
    guard rename(temporary, path) == 0 else {
      let reason = String(cString: strerror(errno))
      unlink(temporary)
      throw WriteError(path: shown, reason: reason)
    }
  }

  /// A device or a FIFO: written in place, never replaced.
  static func writeThrough(_ text: String, to path: String, shownAs shown: String) throws(WriteError) {
    let fd = open(path, O_WRONLY)
    guard fd >= 0 else { throw WriteError(path: shown, reason: String(cString: strerror(errno))) }
    defer { close(fd) }
    if let reason = writeAll(text, to: fd) { throw WriteError(path: shown, reason: reason) }
  }

  /// Writes all of `text`; the reason it stopped, or nil.
  package static func writeAll(_ text: String, to fd: Int32) -> String? {
    let bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
      let n = bytes.withUnsafeBytes { Foundation.write(fd, $0.baseAddress! + offset, bytes.count - offset) }
      if n < 0 {
        if errno == EINTR { continue }
        return String(cString: strerror(errno))
      }
      offset += n
    }
    return nil
  }
}
