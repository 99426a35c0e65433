// Redoc 2.x ends its menu with "API docs by Redocly" and a logo from https://cdn.redoc.ly. This
// page loads nothing from elsewhere: its Content-Security-Policy blocks the logo, and the browser
// would report the blocked load as an error in the console (an offline browser without that
// policy would report a failed load). So the logo's address becomes an empty data: URL before the
// browser sees it, whether React sets it as the attribute or as the property: the image fails to
// decode, Redoc removes it (its onError), and the link's text stays. Nothing else is touched.
(function () {
  "use strict";
  var cdn = /^https?:\/\/cdn\.redoc\.ly\//;
  function local(value) {
    return cdn.test(String(value)) ? "data:," : value;
  }
  var setAttribute = Element.prototype.setAttribute;
  Element.prototype.setAttribute = function (name, value) {
    if (this instanceof HTMLImageElement && String(name).toLowerCase() === "src") {
      value = local(value);
    }
    return setAttribute.call(this, name, value);
  };
  var src = Object.getOwnPropertyDescriptor(HTMLImageElement.prototype, "src");
  Object.defineProperty(HTMLImageElement.prototype, "src", {
    configurable: true,
    enumerable: src.enumerable,
    get: src.get,
    set: function (value) { src.set.call(this, local(value)); }
  });
})();
