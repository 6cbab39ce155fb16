from holodeck.cli.main import main

main()
