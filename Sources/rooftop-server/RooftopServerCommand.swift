import ArgumentParser
import RooftopServer

@main
struct RooftopServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rooftop-server",
        abstract: "The Rooftop reference sync server.",
        version: RooftopServerInfo.version
    )
}
