// A library in the style before modules: one closure, functions assigned to
// properties of its namespace object, CommonJS exports.
(function (root) {
  var _ = function (obj) {
    return new Wrapper(obj);
  };

  // each, aka forEach: one chain of assignments
  var each = _.each = _.forEach = function (obj, iterator, context) {
    for (var i = 0; i < obj.length; i++) iterator.call(context, obj[i], i);
  };

  _.map = _.collect = function (obj, iterator, context) {
    var results = [];
    each(obj, function (value, index) {
      results.push(iterator.call(context, value, index));
    });
    return results;
  };

  _.identity = (value) => value;

  // not functions: no units of their own
  _.VERSION = '1.0.0';
  _.a = _.b = 3;

  function Wrapper(obj) {
    this._wrapped = obj;
    this.value = function () {
      return this._wrapped;
    };
  }

  handlers['click'] = function (event) {
    return event.target;
  };

  root._ = _;
})(this);

exports.parse = function parse(text) {
  return JSON.parse(text);
};

module.exports.stringify = function (value) {
  return JSON.stringify(value);
};
