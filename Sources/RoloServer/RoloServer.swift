import DAV
