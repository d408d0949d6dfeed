# -*- coding: latin-1 -*-
# A coding cookie is honoured: the file is latin-1, its message "café {x}".
raise ValueError('café {0}'.format(x))
