import FoundationEssentials
import Platform

extension Stack {
    /// The directory of the links each process is started through: `identity`, `gateway`, ...
    /// each a symbolic link to `latchkey`, which is the service its name says (as in the image).
    /// Made afresh at every start, so they point at the binary this stack was given.
    public static func makeServiceLinks(binDirectory: String, dataDirectory: String) throws -> String {
        let tool = URL(fileURLWithPath: binDirectory).appendingPathComponent("latchkey").standardizedFileURL.path
        guard FileManager.default.isExecutableFile(atPath: tool) else {
            throw StackStartError("no latchkey executable at \(tool)")
        }
        let links = dataDirectory.appendingPathComponent("bin")
        try FileManager.default.createDirectory(atPath: links, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        for service in startOrder {
            let link = links.appendingPathComponent(service)
            try? FileManager.default.removeItem(atPath: link)
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: tool)
        }
        return links
    }
}
