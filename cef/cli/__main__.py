"""python -m cef.cli"""

from cef.cli import main

main()
