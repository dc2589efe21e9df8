import sys

try:
    from .cli import main
except KeyboardInterrupt:  # Ctrl-C while tdoc is still starting: no traceback
    sys.stderr.write("tdoc: interrupted\n")
    sys.exit(130)

main()
